%% EUnit tests for bridge_worker: the channel's descriptors from the command
%% line (bridge.runtimes.erlang starts the node with -bridge_channel IN OUT).
-module(bridge_worker_tests).

-include_lib("eunit/include/eunit.hrl").

channel_test() ->
    ?assertEqual({fd, 5, 7}, bridge_worker:channel({ok, [["5", "7"]]})),
    %% Without the flag (the relay for --node): standard input and output.
    ?assertEqual({fd, 0, 1}, bridge_worker:channel(error)).
