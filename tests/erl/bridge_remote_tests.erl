%% EUnit tests for bridge_remote, bridge's side of Erlang distribution. The
%% connection itself is tested against real nodes by the Python tests
%% (tests/cli/test_nodes.py); here, what needs no second node.
-module(bridge_remote_tests).

-include_lib("eunit/include/eunit.hrl").

%% The EUnit node was not started with -dist_listen false: it refuses every
%% node operation, so a worker started without --node never starts
%% distribution.
refused_without_relay_flag_test() ->
    ?assertNot(bridge_remote:relay_mode()),
    ?assertMatch({error, {unknown_op, _}},
                 bridge_remote:handle(<<"node_connect">>,
                                      [{<<"node">>, <<"a@b">>}, {<<"cookie">>, <<"c">>}])),
    ?assertEqual(nonode@nohost, node()).

%% Every node operation, known or not, gets the same refusal.
every_node_operation_refused_test() ->
    [?assertMatch({error, {unknown_op, <<"node operations", _/binary>>}},
                  bridge_remote:handle(Op, []))
     || Op <- [<<"node_probe">>, <<"node_load">>, <<"node_bench">>, <<"node_purge">>,
               <<"node_disconnect">>, <<"node_eval">>]].

%% /proc/self/maps lines: the path is the last field; each libcrypto file
%% once, in the order mapped; other libraries and anonymous maps ignored.
libcrypto_files_test() ->
    Maps = <<"7f0000000000-7f0000001000 r--p 00000000 08:01 123 /usr/lib/x86_64-linux-gnu/libcrypto.so.3\n"
             "7f0000001000-7f0000002000 r-xp 00001000 08:01 123 /usr/lib/x86_64-linux-gnu/libcrypto.so.3\n"
             "7f0000003000-7f0000004000 rw-p 00000000 00:00 0 \n"
             "7f0000005000-7f0000006000 r--p 00000000 08:01 456 /usr/lib/x86_64-linux-gnu/libssl.so.3\n"
             "7f0000007000-7f0000008000 r--p 00000000 08:01 789 /opt/ssl/lib/libcrypto.so.1.1\n"
             "\n">>,
    ?assertEqual([<<"/usr/lib/x86_64-linux-gnu/libcrypto.so.3">>, <<"/opt/ssl/lib/libcrypto.so.1.1">>],
                 bridge_remote:libcrypto_files(Maps)),
    ?assertEqual([], bridge_remote:libcrypto_files(<<>>)).

release_number_test() ->
    ?assertEqual(25, bridge_remote:release_number("25")),
    ?assertEqual(0, bridge_remote:release_number("R16B03")),
    ?assertEqual(0, bridge_remote:release_number("")).
