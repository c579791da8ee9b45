# A Ruby worker for interop tests: records what it ran (jid and args, as
# Sidekiq decoded them) in the list `interop:ran`, so the test can compare.
require 'sidekiq'
require 'json'

class RecordJob
  include Sidekiq::Worker

  def perform(*args)
    Sidekiq.redis { |redis| redis.rpush('interop:ran', JSON.generate('jid' => jid, 'args' => args, 'class' => self.class.name)) }
  end
end

# Poll `schedule`/`retry` about every second (and skip the 10 s initial wait),
# so scheduled jobs run within the test's deadline.
Sidekiq.options[:poll_interval_average] = 1
