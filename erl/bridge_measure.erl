%% bridge_measure: timing a loop of calls, and the erlang-questions thread's
%% own timer:tc harness.
%%
%% The procedure is the one in bridge/pyworker/ops.py, so that both workers are
%% measured alike:
%%  1. warm-up and calibration: run the loop with 1, 2, 4, ... iterations
%%     until one run lasts at least half a sample and WarmupNs have passed;
%%     all of it is discarded;
%%  2. loops = iterations that make one run last about SampleNs;
%%  3. Samples runs of that many iterations, each timed on the monotonic
%%     clock in nanoseconds. The raw durations go back to the driver, which
%%     does the statistics.
%% A later round of an interleaved run passes the loop count of the first
%% round, so every sample of a cell covers the same number of calls.
%%
%% Duty cycle (run/3, for a node bridge measures over distribution, which
%% serves its own users meanwhile): after each timed run the process sleeps
%% until its busy time is at most Permille/1000 of the time elapsed since the
%% measurement began. Warm-up and calibration count as busy time. The sleeps
%% fall between timed runs, never inside one, so the samples are the same
%% whatever the duty cycle; the busiest stretch is one sample (sample_ms).
-module(bridge_measure).

-export([run/2, run/3, measure/3, measure_fixed/4, calibrate/3]).
-export([tc/2, thread_stats/1]).
-export_type([loop/0, call_params/0, samples/0, thread_stats/0, permille/0]).

%% Loop(N) makes N calls (bridge_loops builds them).
-type loop() :: fun((pos_integer()) -> ok).
%% What a bench request asks for; FixedLoops = 0 means calibrate.
-type call_params() :: {WarmupNs :: non_neg_integer(), SampleNs :: pos_integer(),
                        Samples :: pos_integer(), FixedLoops :: non_neg_integer()}.
%% Loop count, one duration in ns per sample, ns spent warming up.
-type samples() :: {Loops :: pos_integer(), Durations :: [non_neg_integer()],
                    WarmupNs :: non_neg_integer()}.
-type thread_stats() :: [{min_us | max_us | median_us | avg_us | zero_us_calls, integer()}].
%% The largest share of one scheduler a measurement may keep busy, in 1/1000.
-type permille() :: 1..1000.

%% The pacing state lives in the process dictionary of the measuring process
%% (one measurement per process: bridge_worker and bridge_agent spawn one
%% each), so that the timing functions keep their shape: {StartNs, BusyNs,
%% Permille}.
-define(PACE, bridge_measure_pace).

-spec run(loop(), call_params()) -> samples().
run(Loop, Params) ->
    run(Loop, Params, 1000).

-spec run(loop(), call_params(), permille()) -> samples().
run(Loop, Params, 1000) ->
    _ = erase(?PACE),
    run_paced(Loop, Params);
run(Loop, Params, Permille) ->
    _ = put(?PACE, {erlang:monotonic_time(nanosecond), 0, Permille}),
    try run_paced(Loop, Params) after erase(?PACE) end.

run_paced(Loop, {WarmupNs, SampleNs, Samples, 0}) ->
    measure(Loop, {WarmupNs, SampleNs}, Samples);
run_paced(Loop, {WarmupNs, _SampleNs, Samples, FixedLoops}) ->
    measure_fixed(Loop, WarmupNs, FixedLoops, Samples).

-spec measure(loop(), {WarmupNs :: non_neg_integer(), SampleNs :: pos_integer()},
              pos_integer()) -> samples().
measure(Loop, {WarmupNs, SampleNs}, Samples) ->
    {N, T, Spent} = calibrate(Loop, WarmupNs, SampleNs),
    Loops = max(1, round(N * SampleNs / max(T, 1))),
    Durations = [timed(Loop, Loops) || _ <- lists:seq(1, Samples)],
    {Loops, Durations, Spent}.

%% A later round: warm up with the known loop count, then take the samples.
-spec measure_fixed(loop(), non_neg_integer(), pos_integer(), pos_integer()) -> samples().
measure_fixed(Loop, WarmupNs, Loops, Samples) ->
    Spent = warm(Loop, Loops, WarmupNs, 0),
    {Loops, [timed(Loop, Loops) || _ <- lists:seq(1, Samples)], Spent}.

warm(_Loop, _Loops, WarmupNs, Spent) when Spent >= WarmupNs -> Spent;
warm(Loop, Loops, WarmupNs, Spent) -> warm(Loop, Loops, WarmupNs, Spent + timed(Loop, Loops)).

%% {Iterations, Ns that many took, Ns spent in all}.
-spec calibrate(loop(), non_neg_integer(), pos_integer()) ->
          {pos_integer(), non_neg_integer(), non_neg_integer()}.
calibrate(Loop, WarmupNs, SampleNs) ->
    calibrate(Loop, WarmupNs, SampleNs, 1, 0).

calibrate(Loop, WarmupNs, SampleNs, N, Spent0) ->
    T = timed(Loop, N),
    Spent = Spent0 + T,
    case {T * 2 >= SampleNs, Spent >= WarmupNs} of
        {true, true} -> {N, T, Spent};
        {true, false} -> calibrate(Loop, WarmupNs, SampleNs, N, Spent);
        {false, _} -> calibrate(Loop, WarmupNs, SampleNs, N * 2, Spent)
    end.

timed(Loop, N) ->
    T0 = erlang:monotonic_time(nanosecond),
    _ = Loop(N),
    T = erlang:monotonic_time(nanosecond) - T0,
    pace(T),
    T.

%% Under a duty cycle: sleep until Busy / Elapsed =< Permille / 1000. Whole
%% milliseconds only (the timer's resolution); a shorter debt waits for the
%% next run, so short calibration runs add up instead of escaping the bound.
pace(T) ->
    case get(?PACE) of
        {Start, Busy0, Permille} ->
            Busy = Busy0 + T,
            put(?PACE, {Start, Busy, Permille}),
            Due = Start + Busy * 1000 div Permille,
            WaitMs = (Due - erlang:monotonic_time(nanosecond)) div 1000000,
            case WaitMs > 0 of
                true -> receive after WaitMs -> ok end;
                false -> ok
            end;
        _ ->
            ok
    end.

%% ---------------------------------------------------------------------------
%% The thread's harness, to show what it can resolve:
%%   TC_L = tl([begin {T, _} = timer:tc(M, F, A), T end || _ <- lists:seq(1, N)]),
%%   Min, Max, Median = lists:nth(round((N - 1) / 2), lists:sort(TC_L)),
%%   Average = round(lists:sum(TC_L) / (N - 1))
%% in whole microseconds, exactly as posted (quirks included: the first call
%% is dropped, the median index is round((N-1)/2)).

%% N >= 3 (bridge_ops checks), so N - 1 >= 2 calls are kept.
-spec tc({module(), atom(), [term()]}, pos_integer()) -> thread_stats().
tc({M, F, A}, N) ->
    thread_stats(tl([begin {T, _} = timer:tc(M, F, A), T end || _ <- lists:seq(1, N)])).

-spec thread_stats([non_neg_integer(), ...]) -> thread_stats().
thread_stats(TcL) ->
    N = length(TcL) + 1,
    [{min_us, lists:min(TcL)},
     {max_us, lists:max(TcL)},
     {median_us, lists:nth(max(1, round((N - 1) / 2)), lists:sort(TcL))},
     {avg_us, round(lists:sum(TcL) / (N - 1))},
     {zero_us_calls, length([T || T <- TcL, T =:= 0])}].
