# The Sidekiq 6.4 side of the processing benchmark: one no-op job class,
# timed from inside the process so boot time is not on the clock.
#   BENCH_MODE=throughput BENCH_JOBS=N: prints RESULT {"first_us","last_us"} when N jobs ran.
#   BENCH_MODE=latency    BENCH_JOBS=N: args[0] is the push time (CLOCK_MONOTONIC µs, the
#   same clock Node's process.hrtime reads); prints RESULT {"latencies_us":[...]} after N jobs.
require 'sidekiq'
require 'json'

$stdout.sync = true

module Bench
  MODE = ENV.fetch('BENCH_MODE')
  JOBS = Integer(ENV.fetch('BENCH_JOBS'))
  LOCK = Mutex.new
  @count = 0
  @first = nil
  @latencies = []

  def self.now_us
    Process.clock_gettime(Process::CLOCK_MONOTONIC, :float_microsecond)
  end

  def self.ran(args)
    started = now_us
    LOCK.synchronize do
      @first ||= started
      @latencies << (started - args[0].to_f) if MODE == 'latency'
      @count += 1
      next unless @count == JOBS

      result = MODE == 'latency' ? { latencies_us: @latencies } : { first_us: @first, last_us: now_us }
      puts "RESULT #{JSON.generate(result)}"
    end
  end
end

class NoopJob
  include Sidekiq::Worker

  def perform(*args)
    Bench.ran(args)
  end
end

Sidekiq.configure_server do |config|
  # Stock Sidekiq logs a start and a done line per job; BENCH_SIDEKIQ_QUIET=1 measures it without that I/O.
  config.logger.level = Logger::WARN if ENV['BENCH_SIDEKIQ_QUIET'] == '1'
  config.on(:startup) { puts 'READY' }
end
