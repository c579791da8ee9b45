# A Ruby worker for interop tests: records what it ran (jid and args, as
# Sidekiq decoded them, and the Sidekiq version that ran it) in the list
# `interop:ran`, so the test can compare.
require 'sidekiq'
require 'json'

class RecordJob
  include Sidekiq::Worker

  def perform(*args)
    Sidekiq.redis { |redis| redis.rpush('interop:ran', JSON.generate('jid' => jid, 'args' => args, 'class' => self.class.name, 'sidekiq' => Sidekiq::VERSION)) }
  end
end

# Poll `schedule`/`retry` about every second (and skip the 10 s initial wait),
# so scheduled jobs run within the test's deadline. 7.0 moved the option
# from Sidekiq.options onto the server config.
if Sidekiq::VERSION.to_i >= 7
  Sidekiq.configure_server { |config| config[:poll_interval_average] = 1 }
else
  Sidekiq.options[:poll_interval_average] = 1
end
