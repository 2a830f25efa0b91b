%% bridge_concurrency: N processes making the same call over the same time
%% windows, per-call latencies on a sampled subset of calls, and a probe that
%% shows how late a process that asks to wake every millisecond wakes while
%% the load runs.
%%
%% The procedure (the Python worker follows the same one, bridge/pyworker/conc.py):
%%  1. the batch: calls made back to back between two clock reads, calibrated
%%     (on one process, before the others start) so that a batch lasts about
%%     an eighth of a window; a later round passes the batch it got;
%%  2. N processes are spawned and each says it is ready; only when all are
%%     (a barrier) does the coordinator send them the common start T0, a
%%     warm-up later. Until T0 they warm up together;
%%  3. window I is [T0 + I*W, T0 + (I+1)*W) on the node's monotonic clock,
%%     the same for every process. A process runs batches until a batch ends
%%     past the window's end, and records {Calls, Ns} for the window: the
%%     calls it completed and the time they took. A process that finds a
%%     window already over (it was descheduled that long) records {0, 0}: the
%%     driver drops a window that any process missed;
%%  4. the last call of every batch is timed on its own: that is the sampled
%%     per-call latency. Only one call per batch pays for two clock reads,
%%     so the throughput is not distorted; the sampled call itself carries
%%     the cost of the clock reads, measured once (clock_ns) and reported
%%     beside the latencies;
%%  5. the probe, a process of normal priority like the load, asks for a
%%     timer at the next millisecond boundary (an absolute timer, so no
%%     rounding up to a whole extra millisecond), again and again from T0 to
%%     the end of the last window, and records how late each wake-up was;
%%  6. the schedulers' wall time (active/total) is read at T0 and at the end:
%%     it says whether the work ran on normal or on dirty CPU schedulers.
%%
%% Every process is linked to nothing outside this request: when the VM
%% halts (end of input: the driver went away, or Ctrl-C) they all go with it.
-module(bridge_concurrency).

-export([run/3, calibrate_batch/2, windows/5, probe/1, sched_util/4, clock_cost/0]).
-export_type([params/0, window/0]).

-type params() :: #{workers := pos_integer(),
                    warmup_ns := non_neg_integer(),
                    window_ns := pos_integer(),
                    windows := pos_integer(),
                    batch := non_neg_integer(),
                    idle_probe_ms := non_neg_integer(),
                    same_output := boolean()}.
%% Calls completed in a window and the ns they took; {0, 0}: window missed.
-type window() :: {non_neg_integer(), non_neg_integer()}.
-type sched() :: [{normal | dirty_cpu, non_neg_integer(), non_neg_integer()}].
-type reply() :: {ok, [{atom(), term()}, ...]} | {error, {failed, binary()}}.

%% How many batches fit in a window (step 1).
-define(BATCHES_PER_WINDOW, 8).

-spec run(fun(() -> binary()), bridge_measure:loop(), params()) -> reply().
run(Once, Loop, #{workers := N, warmup_ns := WarmupNs, window_ns := W, windows := M,
                  batch := Batch0, idle_probe_ms := IdleMs, same_output := Same}) ->
    Batch = case Batch0 of
                0 -> calibrate_batch(Loop, W);
                _ -> Batch0
            end,
    ClockNs = clock_cost(),
    Idle = case IdleMs of
               0 -> [];
               _ -> probe(now_ns() + IdleMs * 1000000)
           end,
    Coord = self(),
    Workers = [spawn_monitor(fun() -> worker(Coord, Once, Loop, Batch) end)
               || _ <- lists:seq(1, N)],
    Pids = [P || {P, _} <- Workers],
    ok = await_ready(Pids),
    T0 = now_ns() + WarmupNs,
    End = T0 + M * W,
    Probe = spawn_monitor(fun() -> Coord ! {probe, self(), probe_from(T0, End)} end),
    _ = [P ! {go, T0, W, M} || P <- Pids],
    sleep_until(T0),
    Wall = sched_begin(),
    case collect(Workers, Probe) of
        {ok, Results, Late} ->
            Sched = sched_end(Wall),
            reply(Results, Late, Idle, Sched, Batch, N, Same, ClockNs);
        {error, _} = E ->
            _ = sched_end(Wall),
            E
    end.

%% The batch that lasts about W / 8 when one process runs alone.
-spec calibrate_batch(bridge_measure:loop(), pos_integer()) -> pos_integer().
calibrate_batch(Loop, W) ->
    Target = max(1, W div ?BATCHES_PER_WINDOW),
    {Calls, T, _} = bridge_measure:calibrate(Loop, 0, Target),
    max(1, round(Calls * Target / max(T, 1))).

worker(Coord, Once, Loop, Batch) ->
    Coord ! {ready, self()},
    receive {go, T0, W, M} -> ok end,
    warm(Loop, Batch, T0),
    {Windows, Latencies} = windows(Loop, Batch, T0, W, M),
    Coord ! {done, self(), Windows, Latencies, Once()}.

await_ready([]) -> ok;
await_ready([P | Rest]) ->
    receive {ready, P} -> await_ready(Rest) end.

warm(Loop, Batch, Until) ->
    case now_ns() >= Until of
        true -> ok;
        false -> _ = Loop(Batch), warm(Loop, Batch, Until)
    end.

%% Step 3 and 4: M windows of W ns from T0; {Windows, sampled latencies}.
-spec windows(bridge_measure:loop(), pos_integer(), integer(), pos_integer(),
              pos_integer()) -> {[window()], [non_neg_integer()]}.
windows(Loop, Batch, T0, W, M) ->
    windows(Loop, Batch, T0, W, 0, M, [], []).

windows(_Loop, _Batch, _T0, _W, M, M, Acc, Lat) ->
    {lists:reverse(Acc), Lat};
windows(Loop, Batch, T0, W, I, M, Acc, Lat) ->
    Start = now_ns(),
    End = T0 + (I + 1) * W,
    case Start >= End of
        true ->
            windows(Loop, Batch, T0, W, I + 1, M, [{0, 0} | Acc], Lat);
        false ->
            {Calls, Stop, Lat1} = until(Loop, Batch, End, 0, Lat),
            windows(Loop, Batch, T0, W, I + 1, M, [{Calls, Stop - Start} | Acc], Lat1)
    end.

%% Batches until one ends at or past End; the last call of each is timed alone.
until(Loop, Batch, End, Calls, Lat) ->
    _ = case Batch > 1 of
            true -> Loop(Batch - 1);
            false -> ok
        end,
    T0 = now_ns(),
    _ = Loop(1),
    T1 = now_ns(),
    Done = Calls + Batch,
    case T1 >= End of
        true -> {Done, T1, [T1 - T0 | Lat]};
        false -> until(Loop, Batch, End, Done, [T1 - T0 | Lat])
    end.

%% Step 5: wake at every millisecond boundary until EndNs; how late each
%% wake-up was, in ns.
-spec probe(integer()) -> [non_neg_integer()].
probe(EndNs) ->
    probe(EndNs, []).

probe(EndNs, Acc) ->
    Next = erlang:monotonic_time(millisecond) + 1,
    NextNs = erlang:convert_time_unit(Next, millisecond, nanosecond),
    case NextNs > EndNs of
        true ->
            Acc;
        false ->
            Ref = erlang:start_timer(Next, self(), tick, [{abs, true}]),
            receive {timeout, Ref, tick} -> ok end,
            probe(EndNs, [max(0, now_ns() - NextNs) | Acc])
    end.

probe_from(T0, End) ->
    sleep_until(T0),
    probe(End).

sleep_until(T) ->
    case (T - now_ns()) div 1000000 of
        Ms when Ms > 0 -> receive after Ms -> ok end;
        _ -> ok
    end.

%% Every worker's result and the probe's, or the first crash (the others are
%% killed: a level whose process died is a failed level, nothing more).
collect(Workers, {ProbePid, ProbeRef}) ->
    collect([{ProbePid, ProbeRef} | Workers], ProbePid, #{}, []).

collect([], _ProbePid, Results, Late) ->
    {ok, Results, Late};
collect(Waiting, ProbePid, Results, Late) ->
    receive
        {done, P, Windows, Lat, Out} ->
            Rest = demonitor_flush(P, Waiting),
            collect(Rest, ProbePid, Results#{P => {Windows, Lat, Out}}, Late);
        {probe, ProbePid, Ls} ->
            collect(demonitor_flush(ProbePid, Waiting), ProbePid, Results, Ls);
        {'DOWN', _Ref, process, P, Reason} ->
            case lists:keymember(P, 1, Waiting) of
                true ->
                    _ = [exit(Q, kill) || {Q, _} <- Waiting, Q =/= P],
                    Who = case P of
                              ProbePid -> <<"the probe">>;
                              _ -> <<"a worker process">>
                          end,
                    {error, {failed, bridge_args:format("~ts of the concurrent run crashed: ~0p",
                                                        [Who, Reason])}};
                false ->
                    collect(Waiting, ProbePid, Results, Late)
            end
    end.

demonitor_flush(P, Waiting) ->
    {P, Ref} = lists:keyfind(P, 1, Waiting),
    true = erlang:demonitor(Ref, [flush]),
    lists:keydelete(P, 1, Waiting).

reply(Results, Late, Idle, Sched, Batch, N, Same, ClockNs) ->
    Each = maps:values(Results),
    Outputs = [Out || {_, _, Out} <- Each],
    [First | _] = Outputs,
    case Same andalso lists:any(fun(O) -> O =/= First end, Outputs) of
        true ->
            {error, {failed, <<"the concurrent processes computed different bytes">>}};
        false ->
            {ok, [{level, N},
                  {batch, Batch},
                  {windows, [Ws || {Ws, _, _} <- Each]},
                  {latency_ns, [L || {_, L, _} <- Each]},
                  {probe_ns, lists:reverse(Late)},
                  {probe_idle_ns, lists:reverse(Idle)},
                  {sched, Sched},
                  {schedulers_online, erlang:system_info(schedulers_online)},
                  {dirty_cpu_schedulers_online,
                   erlang:system_info(dirty_cpu_schedulers_online)},
                  {clock_ns, ClockNs},
                  {output, First}]}
    end.

%% Step 6. The flag is restored afterwards: turning it on costs a little on
%% every scheduler switch.
sched_begin() ->
    Old = erlang:system_flag(scheduler_wall_time, true),
    {Old, wall_time()}.

sched_end({Old, Before}) ->
    After = wall_time(),
    _ = erlang:system_flag(scheduler_wall_time, Old),
    sched_util(Before, After, erlang:system_info(schedulers_online),
               {erlang:system_info(schedulers),
                erlang:system_info(dirty_cpu_schedulers_online)}).

wall_time() ->
    case erlang:statistics(scheduler_wall_time_all) of
        undefined -> [];
        L -> lists:sort(L)
    end.

%% Active and total ns summed over the online normal schedulers (ids 1..S)
%% and the online dirty CPU schedulers (ids after all the normal ones).
-spec sched_util([{pos_integer(), non_neg_integer(), non_neg_integer()}],
                 [{pos_integer(), non_neg_integer(), non_neg_integer()}],
                 pos_integer(), {pos_integer(), non_neg_integer()}) -> sched().
sched_util(Before, After, NormalOnline, {Normal, DirtyOnline}) ->
    Diffs = [{Id, A1 - A0, T1 - T0} || {Id, A0, T0} <- Before,
                                      {Id1, A1, T1} <- After, Id1 =:= Id],
    Sum = fun(Lo, Hi) ->
              lists:foldl(fun({Id, A, T}, {SA, ST}) when Id >= Lo, Id =< Hi -> {SA + A, ST + T};
                             (_, Acc) -> Acc
                          end, {0, 0}, Diffs)
          end,
    {NA, NT} = Sum(1, NormalOnline),
    {DA, DT} = Sum(Normal + 1, Normal + DirtyOnline),
    [{normal, NA, NT}, {dirty_cpu, DA, DT}].

%% What timing one call adds to its sampled latency: the median of an empty
%% timed region (the two clock reads around it), reported beside the
%% latencies, not subtracted from them.
-spec clock_cost() -> non_neg_integer().
clock_cost() ->
    Ds = lists:sort([begin T0 = now_ns(), T1 = now_ns(), T1 - T0 end || _ <- lists:seq(1, 1001)]),
    lists:nth(501, Ds).

now_ns() ->
    erlang:monotonic_time(nanosecond).
