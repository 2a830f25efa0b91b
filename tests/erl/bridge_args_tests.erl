%% EUnit tests for bridge_args: reading arguments, and the exact messages
%% that refuse them (they reach the user as the reason of an error reply).
-module(bridge_args_tests).

-include_lib("eunit/include/eunit.hrl").

-define(ARGS, [{<<"n">>, 5}, {<<"s">>, <<"x">>}, {<<"l">>, "x"}, not_a_pair]).

arg_test() ->
    ?assertEqual(5, bridge_args:arg(<<"n">>, ?ARGS)),
    ?assertThrow({bad_arg, <<"missing argument: m">>}, bridge_args:arg(<<"m">>, ?ARGS)).

bin_arg_test() ->
    ?assertEqual(<<"x">>, bridge_args:bin_arg(<<"s">>, ?ARGS)),
    ?assertThrow({bad_arg, <<"argument must be a binary: l">>}, bridge_args:bin_arg(<<"l">>, ?ARGS)).

pos_int_test() ->
    ?assertEqual(5, bridge_args:pos_int(<<"n">>, ?ARGS, 0, 5)),
    ?assertThrow({bad_arg, <<"argument n must be an integer in 6..9">>},
                 bridge_args:pos_int(<<"n">>, ?ARGS, 6, 9)),
    ?assertThrow({bad_arg, <<"argument s must be an integer in 0..9">>},
                 bridge_args:pos_int(<<"s">>, ?ARGS, 0, 9)).

opt_int_test() ->
    ?assertEqual(0, bridge_args:opt_int(<<"loops">>, ?ARGS, 0, 0, 9)),
    ?assertEqual(5, bridge_args:opt_int(<<"n">>, ?ARGS, 0, 0, 9)),
    ?assertThrow({bad_arg, _}, bridge_args:opt_int(<<"n">>, ?ARGS, 0, 0, 4)).

printable_test() ->
    ?assertEqual(<<"sha1">>, bridge_args:printable(<<"sha1">>)),
    ?assertEqual(<<(binary:copy(<<"a">>, 40))/binary, "...">>,
                 bridge_args:printable(binary:copy(<<"a">>, 41))),
    ?assertEqual(<<"(not a binary)">>, bridge_args:printable(42)).

format_test() ->
    ?assertEqual(<<"error:badarg">>, bridge_args:format("~p:~0p", [error, badarg])),
    ?assertEqual(<<"caf", 16#e9/utf8>>, bridge_args:format("~ts", [[$c, $a, $f, 16#e9]])).

bins_arg_test() ->
    Args = [{<<"p">>, [<<1>>, <<2>>]}, {<<"q">>, [<<1>>, 2]}, {<<"r">>, <<"x">>}],
    ?assertEqual([<<1>>, <<2>>], bridge_args:bins_arg(<<"p">>, Args, 2)),
    ?assertThrow({bad_arg, <<"argument p must be 3 binaries">>}, bridge_args:bins_arg(<<"p">>, Args, 3)),
    ?assertThrow({bad_arg, <<"argument q must be 2 binaries">>}, bridge_args:bins_arg(<<"q">>, Args, 2)),
    ?assertThrow({bad_arg, <<"argument r must be 1 binaries">>}, bridge_args:bins_arg(<<"r">>, Args, 1)).
