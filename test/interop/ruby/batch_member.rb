# A Ruby worker for the interop test of batch jobs run by stock Sidekiq
# (no Pro, so nothing of batches): a server middleware records the job hash
# as Sidekiq handed it over (its jid, its `bid` and every member's name) in
# the list `interop:seen`, and BatchMember fails when told to, so the test can
# read the retry Sidekiq files. The poll settings are recorder.rb's.
require_relative 'recorder'

class SeenMiddleware
  def call(_worker, job, _queue)
    Sidekiq.redis do |redis|
      redis.rpush('interop:seen', JSON.generate('jid' => job['jid'], 'bid' => job['bid'], 'keys' => job.keys,
                                                'sidekiq' => Sidekiq::VERSION))
    end
    yield
  end
end

class BatchMember
  include Sidekiq::Worker
  sidekiq_options retry: 3

  def perform(kind, number)
    raise ArgumentError, "batch member #{number} fails" if kind == 'fail'
  end
end

Sidekiq.configure_server do |config|
  config.server_middleware { |chain| chain.add SeenMiddleware }
end
