# One long-lived Ruby with Sidekiq loaded, shared by the tests of one file
# (test/support/sidekiq.ts, RubySession): booting Ruby and Sidekiq once per
# file instead of once per query keeps the interop suite fast.
#
# Protocol: each stdin line is {"script": "..."}; the script runs in a fresh
# binding with $stdout captured, and one JSON line {ok, out | error} goes to
# fd 3. Replies use their own descriptor because Sidekiq 7+ logs to stdout.
require 'sidekiq'
require 'sidekiq/api'
require 'json'
require 'stringio'

Sidekiq.logger.level = Logger::WARN
# A method's binding closes over nothing: a script's locals (`out`, say) can
# neither see nor clobber the loop's below.
def fresh_binding
  binding
end

# Sidekiq::Workers as plain hashes for every version: it yields a Hash up to
# 6.x and a Sidekiq::Work from 7.0, whose [] reader 8.x dropped.
def work_entries
  Sidekiq::Workers.new.map do |process_id, tid, work|
    queue, run_at, payload = work.is_a?(Hash) ? [work['queue'], work['run_at'], work['payload']] : [work.queue, work.run_at.to_i, work.payload]
    payload = JSON.parse(payload) if payload.is_a?(String)
    { 'process' => process_id, 'tid' => tid, 'queue' => queue, 'run_at' => run_at, 'payload' => payload }
  end
end

replies = IO.new(3, 'w')
replies.sync = true

$stdin.each_line do |line|
  script = JSON.parse(line).fetch('script')
  out = StringIO.new
  $stdout = out
  begin
    eval(script, Object.new.send(:fresh_binding))
    reply = { ok: true, out: out.string }
  rescue Exception => e # rubocop:disable Lint/RescueException -- a failed script is the test's to report, not the session's end
    reply = { ok: false, error: "#{e.class}: #{e.message[0, 2000]}\n#{Array(e.backtrace).first(8).join("\n")}\n#{out.string[0, 2000]}" }
  ensure
    $stdout = STDOUT
  end
  replies.puts(JSON.generate(reply))
end
