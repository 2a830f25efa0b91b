%% sha_loop: an independent Erlang harness for crypto:hash(sha256, Data),
%% sharing nothing with bridge's worker (bench/agreement.py compiles it with
%% erlc into a temporary directory and runs it in a plain `erl -noshell`).
%%
%% It is the loop people write by hand: a tail-recursive loop of crypto:hash
%% timed as a whole by timer:tc (microseconds). One call first loads the
%% crypto NIF (tens of milliseconds); then the loop count is doubled until one
%% timing lasts at least TargetMs, which doubles as the warm-up; then Reps
%% timings of that many calls follow, each after a pause of PauseMs. It
%% prints one line per timing, "ns_per_call <float>", and the driver takes
%% the median.
%%
%% Why short timings with pauses: on a busy machine a process that computes
%% without a break gets its fair share of a CPU, and every long timing then
%% includes the time it waited; a process that sleeps between short timings
%% (as bridge's workers do between rounds) gets the CPU when it wakes. With
%% the same pattern on both sides, a difference is bridge's, not the
%% scheduler's. On a quiet machine the pattern makes no difference.
%%
%%   erl -noshell -pa DIR -run sha_loop main Size Reps TargetMs PauseMs -s init stop
-module(sha_loop).

-export([main/1]).

-spec main([string()]) -> ok.
main([SizeS, RepsS, TargetMsS, PauseMsS]) ->
    Size = list_to_integer(SizeS),
    Reps = list_to_integer(RepsS),
    TargetUs = list_to_integer(TargetMsS) * 1000,
    PauseMs = list_to_integer(PauseMsS),
    Data = binary:copy(<<16#a5>>, Size),
    _ = crypto:hash(sha256, Data),
    N = calibrate(Data, 1, TargetUs),
    lists:foreach(
      fun(_) ->
              timer:sleep(PauseMs),
              {Us, ok} = timer:tc(fun() -> loop(N, Data) end),
              io:format("ns_per_call ~.6f~n", [Us * 1000 / N])
      end,
      lists:seq(1, Reps)).

calibrate(Data, N, TargetUs) ->
    {Us, ok} = timer:tc(fun() -> loop(N, Data) end),
    if Us >= TargetUs -> N;
       true -> calibrate(Data, N * 2, TargetUs)
    end.

loop(0, _) -> ok;
loop(N, Data) ->
    _ = crypto:hash(sha256, Data),
    loop(N - 1, Data).
