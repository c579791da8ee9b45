# The Ruby twin of test/chaos/fixtures/sweep-worker.ts: SweepJob(total, size) iterates batches of `size` items out of
# `total`, its cursor a batch's first item, so a run interrupted here resumes on wurk from its cursor and the other way
# round. Each batch is recorded in `sweep:log` as "<who> <first> <end>"; a batch at or past `sweep:gate` waits until
# the test raises the gate or this process is stopping.
require 'sidekiq'
require 'json'

class SweepJob
  include Sidekiq::IterableJob

  WHO = "ruby-#{Process.pid}"

  def build_enumerator(total, size, cursor:)
    Enumerator.new do |yielder|
      from = cursor || 0
      while from < total
        stop = [from + size, total].min
        yielder.yield((from...stop).to_a, from)
        from = stop
      end
    end
  end

  def each_iteration(batch, _total, _size)
    first = batch.first
    sleep 0.01 while !interrupted? && first >= Sidekiq.redis { |c| c.call('GET', 'sweep:gate') }.to_i
    Sidekiq.redis { |c| c.call('RPUSH', 'sweep:log', "#{WHO} #{first} #{first + batch.size}") }
  end

  def on_complete
    final = { 'cursor' => @_cursor, 'executions' => @_executions, 'who' => WHO }
    Sidekiq.redis { |c| c.call('SET', 'sweep:final', JSON.generate(final)) }
  end
end
