%% EUnit tests for bridge_user: no user code without the start-up flag, a
%% request names an expression by key only, the module the driver wrote is
%% compiled and timed, and its errors carry the expression.
-module(bridge_user_tests).

-include_lib("eunit/include/eunit.hrl").

-define(KEY, <<"0123456789abcdef">>).

args(Key) ->
    [{<<"expr">>, Key}, {<<"data">>, <<"abc">>}, {<<"size">>, 3}, {<<"key">>, <<"k">>},
     {<<"iv">>, <<>>}, {<<"pub">>, <<>>}, {<<"sig">>, <<>>}].

%% What bridge.runtimes.usercode.erlang_source writes for `Expr`.
write(Dir, Key, Expr) ->
    Mod = "bridge_user_" ++ binary_to_list(Key),
    Vars = "Data, Size, Key, IV, Count, Pub, Sig",
    Src = ["-module(", Mod, ").\n-compile([nowarn_unused_vars]).\n-export([once/7, loop/9]).\n",
           "once(", Vars, ") ->\n    begin\n", Expr, "\n    end.\n",
           "loop(0, _, _, _, _, _, _, _, A) -> A;\n",
           "loop(N, ", Vars, ", _) ->\n    A = begin\n", Expr, "\n    end,\n",
           "    loop(N - 1, ", Vars, ", A).\n"],
    ok = file:write_file(filename:join(Dir, Mod ++ ".erl"), Src),
    ok = file:write_file(filename:join(Dir, Mod ++ ".expr"), Expr).

tmpdir() ->
    Dir = filename:join(["/tmp", "bridge_user_tests_" ++ os:getpid()]),
    ok = filelib:ensure_dir(filename:join(Dir, "x")),
    Dir.

not_started_with_user_code_test() ->
    ?assertMatch({error, {unknown_call, <<"unknown call: user", _/binary>>}},
                 bridge_user:prepare(args(?KEY))).

key_only_test() ->
    Dir = tmpdir(),
    ?assertMatch({error, {bad_request, _}}, bridge_user:prepare_in(Dir, args(<<"../../etc/passwd">>))),
    ?assertMatch({error, {unknown_call, _}}, bridge_user:prepare_in(Dir, args(<<"fedcba9876543210">>))),
    done(Dir).

compiled_and_timed_test() ->
    Dir = tmpdir(),
    write(Dir, ?KEY, "crypto:hash(sha256, <<Key/binary, Data/binary>>)"),
    {ok, user_erlang, {Once, Loop}} = bridge_user:prepare_in(Dir, args(?KEY)),
    ?assertEqual(crypto:hash(sha256, <<"kabc">>), Once()),
    ?assertEqual(ok, Loop(3)),
    Key2 = <<"00000000000000aa">>,
    write(Dir, Key2, "{Size, Count}"),  % not a binary: its external term format
    {ok, _, {Once2, _}} = bridge_user:prepare_in(Dir, args(Key2)),
    ?assertEqual(term_to_binary({3, 3}), Once2()),
    done(Dir).

errors_carry_the_expression_test() ->
    Dir = tmpdir(),
    Bad = <<"00000000000000bb">>,
    write(Dir, Bad, "foo(Data"),
    {error, {failed, Message}} = bridge_user:prepare_in(Dir, args(Bad)),
    ?assertMatch(<<"foo(Data: compile error: ", _/binary>>, Message),
    Raise = <<"00000000000000cc">>,
    write(Dir, Raise, "erlang:error(boom)"),
    {ok, _, {Once, _}} = bridge_user:prepare_in(Dir, args(Raise)),
    ?assertError({bridge_user, <<"erlang:error(boom) raised error:boom">>}, Once()),
    done(Dir).

%% The limit per sample: a guarded process marks each step; the guard is
%% overdue only once the last mark is older than the limit.
guard_test() ->
    ?assertEqual(infinity, bridge_user:wait_ms(none)),
    ?assertEqual(false, bridge_user:overdue(none)),
    Guard = bridge_user:guard(30),
    ?assert(bridge_user:wait_ms(Guard) =< 31),
    ?assertEqual(false, bridge_user:overdue(Guard)),
    timer:sleep(50),
    ?assertMatch({true, <<"a sample ran past the limit of 30 ms">>}, bridge_user:overdue(Guard)),
    ?assertEqual(1, bridge_user:wait_ms(Guard)).

marks_test() ->
    Dir = tmpdir(),
    Key = <<"00000000000000dd">>,
    write(Dir, Key, "timer:sleep(40), Data"),
    {ok, _, {Once, Loop}} = bridge_user:prepare_in(Dir, args(Key)),
    {Mark, _} = Guard = bridge_user:guard(100),
    ok = bridge_user:watch(Guard),
    timer:sleep(150),
    ?assertMatch({true, _}, bridge_user:overdue(Guard)),
    %% The call for its output begins with a mark (it takes 40 ms), and so
    %% does each timed run of its loop (bridge_measure's, just before the run):
    %% the mark is the time the step began, read back as the guard reads it.
    %% (Not "not overdue just after": a busy machine can keep this process
    %% from looking for longer than the limit; guard_test covers overdue/1.)
    ?assertEqual(true, began_with_a_mark(Mark, Once)),
    timer:sleep(150),
    ?assertMatch({true, _}, bridge_user:overdue(Guard)),
    ?assertEqual(true, began_with_a_mark(Mark, fun() ->
                                                   bridge_measure:measure_fixed(Loop, 0, 1, 1)
                                               end)),
    ok = bridge_user:watch(none),
    done(Dir).

%% Step (which sleeps 40 ms after its mark) moved the mark to its start:
%% after the time it was called, at least 40 ms before it returned.
began_with_a_mark(Mark, Step) ->
    Called = erlang:monotonic_time(millisecond),
    _ = Step(),
    Returned = erlang:monotonic_time(millisecond),
    At = atomics:get(Mark, 1),
    At >= Called andalso At =< Returned - 40.

done(Dir) ->
    [ok = file:delete(F) || F <- filelib:wildcard(filename:join(Dir, "*"))],
    ok = file:del_dir(Dir).
