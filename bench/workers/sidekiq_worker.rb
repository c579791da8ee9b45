# The Sidekiq 6.4 side of the processing benchmark: one job class running
# BENCH_SHAPE, timed from inside the process so boot time is not on the clock.
# Same protocol as recorder.ts:
#   BENCH_MODE=throughput: a PROGRESS {"count","first_us","last_us"} line every 50 ms while jobs run.
#   BENCH_MODE=latency BENCH_JOBS=N: args[0] is the push time (CLOCK_MONOTONIC µs, the
#   same clock Node's process.hrtime reads); prints RESULT {"latencies_us":[...]} after N jobs.
require 'sidekiq'
require 'json'

$stdout.sync = true

module Bench
  MODE = ENV.fetch('BENCH_MODE')
  SHAPE = ENV['BENCH_SHAPE']
  JOBS = Integer(ENV.fetch('BENCH_JOBS'))
  LOCK = Mutex.new
  @count = 0
  @reported = 0
  @first = nil
  @last = nil
  @latencies = []

  def self.now_us
    Process.clock_gettime(Process::CLOCK_MONOTONIC, :float_microsecond)
  end

  def self.started(args)
    started = now_us
    LOCK.synchronize do
      @first ||= started
      next unless MODE == 'latency'

      @latencies << (started - args[0].to_f)
      puts "RESULT #{JSON.generate(latencies_us: @latencies)}" if @latencies.size == JOBS
    end
  end

  def self.finished
    finished = now_us
    LOCK.synchronize do
      @last = finished
      @count += 1
    end
  end

  def self.run_shape
    case SHAPE
    when 'cpu'
      acc = 0.0
      i = 1
      while i <= 20_000
        acc += Math.sqrt(i) * Math.log(i)
        i += 1
      end
      acc
    when 'io' then sleep 0.005
    end
  end

  def self.report_progress
    line = LOCK.synchronize do
      next nil if @count == @reported

      @reported = @count
      "PROGRESS #{JSON.generate(count: @count, first_us: @first, last_us: @last)}"
    end
    puts line if line
  end
end

class NoopJob
  include Sidekiq::Worker

  def perform(*args)
    Bench.started(args)
    Bench.run_shape
    Bench.finished
  end
end

Sidekiq.configure_server do |config|
  # Stock Sidekiq logs a start and a done line per job; the bench runs it at WARN
  # (BENCH_SIDEKIQ_QUIET=1) so that log I/O does not decide the ratio.
  config.logger.level = Logger::WARN if ENV['BENCH_SIDEKIQ_QUIET'] == '1'
  config.on(:startup) do
    puts 'READY'
    if Bench::MODE == 'throughput'
      Thread.new do
        loop do
          sleep 0.05
          Bench.report_progress
        end
      end
    end
  end
end
