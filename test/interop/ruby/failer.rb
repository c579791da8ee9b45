# A Ruby worker for the retry round-trip tests: always fails, so a job that
# failed on wurk is retried (and fails again) on stock Sidekiq. Records the
# raw args it saw and the Sidekiq version in `interop:failed`.
require 'sidekiq'
require 'json'

class RoundTripJob
  include Sidekiq::Worker
  sidekiq_options retry: 5

  def perform(*args)
    Sidekiq.redis { |redis| redis.rpush('interop:failed', JSON.generate('jid' => jid, 'args' => args, 'sidekiq' => Sidekiq::VERSION)) }
    raise ArgumentError, "ruby says no to #{args.length} args"
  end
end
