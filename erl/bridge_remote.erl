%% bridge_remote: bridge's own side of Erlang distribution. bridge's Python
%% driver cannot speak distribution, so its local Erlang worker does: started
%% for `--node` only, as
%%   erl -noshell -noinput -hidden -dist_listen false -nocookie ...
%% it becomes a hidden node that never listens (so it needs no epmd of its
%% own and takes no port) and connects out to each node it is given, with
%% the cookie the driver sends over the port, never on a command line. Then it
%% relays requests to those nodes.
%%
%% Operations (bridge_worker hands over every "node_..." request):
%%   node_connect     look the node up in its host's epmd, set its cookie,
%%                    connect, check its release
%%   node_probe       read-only facts about the node, through existing
%%                    functions only: nothing is loaded into it
%%   node_load        load bridge_agent and the measurement modules (renamed,
%%                    compiled for the node's release by the driver), then
%%                    start the agent's guard
%%   node_bench       one bench request, run by the agent on the node
%%   node_purge       delete and purge those modules, and check they are gone
%%   node_disconnect  drop the connection
%% Every call into a node has a timeout. A node that is gone answers
%% {error, {nodedown, _}}; the driver then gives up on that node only.
%%
%% A worker started without -dist_listen false refuses all of these: without
%% --node, bridge's node has no distribution at all.
-module(bridge_remote).

-export([handle/2, relay_mode/0, libcrypto_files/1, release_number/1]).
-export_type([error_class/0, reply/0]).

-import(bridge_args, [arg/2, bin_arg/2, pos_int/4, format/2]).

%% The oldest release a node may run: erpc (the rpc bridge uses) and the
%% distribution handshake of OTP 23 are needed.
-define(MIN_RELEASE, 23).
%% epmd reports the highest distribution version a node speaks: 6 from OTP 23.
-define(MIN_DIST_VERSION, 6).
-define(MAX_TIMEOUT_MS, 3600000).

-type error_class() :: bad_request | unknown_op | unreachable | no_node | too_old | refused
                     | nodedown | timeout | busy | unsupported | failed.
-type reply() :: {ok, [{atom(), term()}]} | {error, {error_class(), binary()}}.

-spec handle(binary(), bridge_args:args()) -> reply().
handle(Op, Args) ->
    case relay_mode() of
        true ->
            try
                op(Op, Args)
            catch
                throw:{bad_arg, Message} -> {error, {bad_request, Message}};
                throw:{node_error, Class, Message} -> {error, {Class, Message}}
            end;
        false ->
            {error, {unknown_op, <<"node operations are served only by a worker that bridge"
                                   " started for --node (with -dist_listen false)">>}}
    end.

%% The flag that keeps this node from listening is also the permission to
%% start distribution at all.
-spec relay_mode() -> boolean().
relay_mode() ->
    init:get_argument(dist_listen) =:= {ok, [["false"]]}.

op(<<"node_connect">>, Args) ->
    %% A crash here must not reach bridge_worker, whose "operation crashed"
    %% reply quotes the reason and could quote a stack frame with the cookie.
    try
        connect(Args)
    catch
        error:Reason when is_atom(Reason) ->
            {error, {failed, format("setting up the connection failed: ~p", [Reason])}};
        error:_ ->
            {error, {failed, <<"setting up the connection failed">>}};
        exit:_ ->
            {error, {failed, <<"setting up the connection failed (a process exited)">>}}
    end;
op(<<"node_probe">>, Args) -> {ok, probe(node_arg(Args), timeout_arg(Args))};
op(<<"node_load">>, Args) -> load(Args);
op(<<"node_bench">>, Args) -> bench(Args);
op(<<"node_purge">>, Args) -> purge(node_arg(Args), modules_arg(Args), timeout_arg(Args));
op(<<"node_disconnect">>, Args) ->
    {ok, [{disconnected, erlang:disconnect_node(node_arg(Args))}]};
op(Op, _Args) ->
    {error, {unknown_op, <<"unknown operation: ", (bridge_args:printable(Op))/binary>>}}.

%% ---------------------------------------------------------------------------
%% Arguments. Node and module names arrive as binaries and become atoms here:
%% the driver made them, and the relay is bridge's own node.

node_arg(Args) ->
    Bin = bin_arg(<<"node">>, Args),
    case binary:split(Bin, <<"@">>) of
        [Name, Host] when Name =/= <<>>, Host =/= <<>>, byte_size(Bin) < 256 ->
            binary_to_atom(Bin, utf8);
        _ ->
            throw({bad_arg, <<"argument node must be NAME@HOST">>})
    end.

timeout_arg(Args) ->
    pos_int(<<"timeout_ms">>, Args, 1, ?MAX_TIMEOUT_MS).

modules_arg(Args) ->
    case arg(<<"modules">>, Args) of
        L when is_list(L) -> [module_name(M) || M <- L];
        _ -> throw({bad_arg, <<"argument modules must be a list">>})
    end.

module_name(B) when is_binary(B), byte_size(B) > 0, byte_size(B) < 256 -> binary_to_atom(B, utf8);
module_name(_) -> throw({bad_arg, <<"a module name must be a binary">>}).

%% ---------------------------------------------------------------------------
%% node_connect. The cookie is held only long enough to hand it to auth: no
%% error reply, exception or log line made here can carry it.

connect(Args) ->
    Node = node_arg(Args),
    Timeout = timeout_arg(Args),
    Domain = case bin_arg(<<"names">>, Args) of
                 <<"shortnames">> -> shortnames;
                 <<"longnames">> -> longnames;
                 _ -> throw({bad_arg, <<"argument names must be shortnames or longnames">>})
             end,
    Self = bin_arg(<<"self">>, Args),
    Cookie = cookie(bin_arg(<<"cookie">>, Args)),
    ok = start_distribution(Self, Domain),
    [Name, Host] = string:split(atom_to_list(Node), "@"),
    Version = lookup(Name, Host, Timeout),
    true = erlang:set_cookie(Node, Cookie),
    ok = connect_node(Node, Timeout),
    Release = remote(Node, erlang, system_info, [otp_release], Timeout),
    case release_number(Release) < ?MIN_RELEASE of
        true ->
            _ = erlang:disconnect_node(Node),
            throw({node_error, too_old,
                   format("~ts runs OTP ~ts; bridge measures nodes of OTP ~b and later",
                          [Node, Release, ?MIN_RELEASE])});
        false ->
            {ok, [{node, Node}, {self, node()}, {dist_version, Version},
                  {otp_release, unicode:characters_to_binary(Release)}]}
    end.

%% auth accepts printable ASCII; a cookie is an atom, so at most 255 bytes.
cookie(Bin) when byte_size(Bin) > 0, byte_size(Bin) < 256 ->
    case lists:all(fun(C) -> C >= 32 andalso C =< 126 end, binary_to_list(Bin)) of
        true -> binary_to_atom(Bin, latin1);
        false -> throw({bad_arg, <<"the cookie must be printable ASCII">>})
    end;
cookie(_) ->
    throw({bad_arg, <<"the cookie must be 1 to 255 bytes">>}).

start_distribution(Self, Domain) ->
    case node() of
        nonode@nohost ->
            %% -hidden and -dist_listen false on the command line decide how:
            %% net_kernel reads them at start (OTP 23+).
            case net_kernel:start([binary_to_atom(Self, utf8), Domain]) of
                {ok, _} -> ok;
                {error, Why} ->
                    throw({node_error, failed,
                           format("bridge could not start its hidden node ~ts: ~0p", [Self, Why])})
            end;
        _ ->
            ok
    end.

%% The host's epmd tells apart a host that does not answer, a node that is
%% not there, and a node too old to talk to (it registered distribution
%% version 5: OTP 22 or earlier).
lookup(Name, Host, Timeout) ->
    Found = within(Timeout, fun() ->
        case inet:gethostbyname(Host) of
            {error, _} ->
                {unreachable, format("host ~ts does not resolve", [Host])};
            {ok, _} ->
                case erl_epmd:names(Host) of
                    {error, _} ->
                        {unreachable,
                         format("no epmd answers on ~ts (the host is down, a firewall drops"
                                " epmd's port, or no Erlang node runs there)", [Host])};
                    {ok, Names} ->
                        registered(Name, Host, Names, Timeout)
                end
        end
    end),
    case Found of
        {ok, {ok, Version}} -> Version;
        {ok, {Class, Message}} -> throw({node_error, Class, Message});
        crashed -> throw({node_error, unreachable, format("the lookup of ~ts failed", [Host])});
        timeout -> throw({node_error, unreachable,
                          format("~ts did not answer the node lookup within ~b ms",
                                 [Host, Timeout])})
    end.

registered(Name, Host, Names, Timeout) ->
    case lists:keymember(Name, 1, Names) of
        false ->
            Known = lists:join(", ", [N || {N, _} <- lists:sublist(Names, 8)]),
            {no_node, format("epmd on ~ts knows no node named ~ts (it knows: ~ts)",
                             [Host, Name, case Known of [] -> "none"; _ -> Known end])};
        true ->
            case erl_epmd:port_please(Name, Host, Timeout) of
                {port, _, Version} when Version < ?MIN_DIST_VERSION ->
                    {too_old, format("~ts@~ts speaks distribution version ~b: OTP 22 or older;"
                                     " bridge measures nodes of OTP ~b and later",
                                     [Name, Host, Version, ?MIN_RELEASE])};
                {port, _, Version} ->
                    {ok, Version};
                _ ->
                    {no_node, format("epmd on ~ts stopped knowing ~ts", [Host, Name])}
            end
    end.

connect_node(Node, Timeout) ->
    case within(Timeout, fun() -> net_kernel:connect_node(Node) end) of
        {ok, true} ->
            ok;
        {ok, false} ->
            throw({node_error, refused,
                   format("~ts refused bridge's handshake: the cookie is not its cookie (or the"
                          " node admits only some nodes with net_kernel:allow/1, or speaks TLS"
                          " distribution only)", [Node])});
        _ ->
            _ = erlang:disconnect_node(Node),
            throw({node_error, unreachable,
                   format("~ts did not complete the handshake within ~b ms", [Node, Timeout])})
    end.

%% "23" -> 23; anything else (an odd release name) -> 0.
-spec release_number(string()) -> non_neg_integer().
release_number(Release) ->
    case string:to_integer(Release) of
        {N, _} when is_integer(N), N >= 0 -> N;
        _ -> 0
    end.

%% ---------------------------------------------------------------------------
%% node_probe: read-only. Every call is to a function the node already has
%% (erlang, code, file, os, inet; crypto only when it is already loaded), so
%% nothing is loaded and nothing changes there. /proc is read by the node
%% itself, so the maps are its own and the CPU is its host's.

probe(Node, T) ->
    Call = fun(M, F, A) -> remote(Node, M, F, A, T) end,
    Try = fun(M, F, A, Default) -> try_remote(Node, M, F, A, T, Default) end,
    Release = Call(erlang, system_info, [otp_release]),
    Root = Call(code, root_dir, []),
    Loaded = Call(erlang, module_loaded, [crypto]),
    [{otp_release, bin(Release)},
     {otp_version, otp_version(Call, Root, Release)},
     {erts_version, bin(Call(erlang, system_info, [version]))},
     {emu_flavor, Try(erlang, system_info, [emu_flavor], emu)},
     {os_pid, bin(Call(os, getpid, []))},
     {schedulers_online, Call(erlang, system_info, [schedulers_online])},
     {system_architecture, bin(Call(erlang, system_info, [system_architecture]))},
     {os_type, os_type(Call(os, type, []))},
     {hostname, case Call(inet, gethostname, []) of {ok, H} -> bin(H); _ -> <<>> end},
     {code_mode, Call(code, get_mode, [])},
     {crypto_app_version, crypto_app_version(Call(code, lib_dir, [crypto]))},
     {crypto_loaded, Loaded}
     | crypto_facts(Loaded, Call, Try)]
    ++ [{ia32cap, env(Call(os, getenv, ["OPENSSL_ia32cap"]))},
        {armcap, env(Call(os, getenv, ["OPENSSL_armcap"]))}]
    ++ proc_facts(Call).

otp_version(Call, Root, Release) ->
    case Call(file, read_file, [filename:join([Root, "releases", Release, "OTP_VERSION"])]) of
        {ok, Text} -> bin(string:trim(Text));
        _ -> bin(Release)
    end.

crypto_app_version(Dir) when is_list(Dir) ->
    bin(lists:last(string:split(filename:basename(Dir), "-", trailing)));
crypto_app_version(_) ->
    <<>>.

%% Only a crypto that the node has loaded already is asked anything:
%% calling it otherwise would load it and its NIF.
crypto_facts(false, _Call, _Try) ->
    [];
crypto_facts(true, Call, Try) ->
    Info = case Call(erlang, function_exported, [crypto, info, 0]) of
               true -> Try(crypto, info, [], #{});
               false -> #{}
           end,
    [{info_lib, [{N, V, T} || {N, V, T} <- Call(crypto, info_lib, [])]},
     {crypto_info, [{K, value_bin(V)} || {K, V} <- maps:to_list(Info)]},
     {info_fips, Try(crypto, info_fips, [], not_supported)}].

proc_facts(Call) ->
    Maps = case Call(file, read_file, ["/proc/self/maps"]) of
               {ok, M} -> [{libcrypto_mapped, libcrypto_files(M)}];
               {error, Why} -> [{maps_error, format("~0p", [Why])}]
           end,
    CpuInfo = case Call(file, read_file, ["/proc/cpuinfo"]) of
                  {ok, C} -> [{cpuinfo, C}];
                  {error, Why2} -> [{cpuinfo_error, format("~0p", [Why2])}]
              end,
    Maps ++ CpuInfo.

%% The distinct files whose name starts with libcrypto, in the order mapped.
-spec libcrypto_files(binary()) -> [binary()].
libcrypto_files(Maps) ->
    Paths = [lists:last(Fields) || Line <- binary:split(Maps, <<"\n">>, [global]),
                                   Fields <- [string:lexemes(Line, " ")],
                                   Fields =/= []],
    Mapped = [P || P <- Paths, is_binary(P),
                   string:prefix(filename:basename(P), <<"libcrypto">>) =/= nomatch],
    dedup(Mapped, []).

dedup([], Seen) -> lists:reverse(Seen);
dedup([P | Rest], Seen) ->
    case lists:member(P, Seen) of
        true -> dedup(Rest, Seen);
        false -> dedup(Rest, [P | Seen])
    end.

os_type({Family, Name}) -> format("~p/~p", [Family, Name]);
os_type(Other) -> format("~0p", [Other]).

env(false) -> undefined;
env(Value) -> bin(Value).

%% ---------------------------------------------------------------------------
%% node_load: refuse a node that already runs bridge's modules (another
%% bridge is measuring it: two would disturb each other and together exceed
%% the duty cycle), load every module, let the agent check crypto, then
%% start its guard. On any failure, what was loaded is removed again.

load(Args) ->
    Node = node_arg(Args),
    T = timeout_arg(Args),
    Prefix = binary_to_list(bin_arg(<<"prefix">>, Args)),
    Agent = module_name(bin_arg(<<"agent">>, Args)),
    Beams = case arg(<<"beams">>, Args) of
                L when is_list(L) -> [{module_name(M), B} || {M, B} <- L, is_binary(B)];
                _ -> throw({bad_arg, <<"argument beams must be a list of {Name, Binary}">>})
            end,
    Mods = [M || {M, _} <- Beams],
    case [M || {M, _} <- remote(Node, code, all_loaded, [], T),
               lists:prefix(Prefix, atom_to_list(M))] of
        [] -> ok;
        [Busy | _] ->
            throw({node_error, busy,
                   format("~ts already runs bridge's module ~ts: another bridge is measuring it",
                          [Node, Busy])})
    end,
    try
        lists:foreach(fun({M, B}) ->
                              loaded(Node, M, remote(Node, code, load_binary, [M, origin(M), B], T))
                      end, Beams),
        case remote(Node, Agent, prepare, [], T) of
            ok -> ok;
            {error, {Class, Message}} -> throw({node_error, Class, Message})
        end,
        {ok, _} = remote(Node, Agent, guard, [node(), Mods], T),
        {ok, [{loaded, [atom_to_binary(M, utf8) || M <- Mods]}]}
    catch
        throw:Error ->
            _ = try_purge(Node, Mods, T),
            throw(Error)
    end.

loaded(_Node, M, {module, M}) ->
    ok;
loaded(Node, M, Other) ->
    throw({node_error, failed, format("~ts could not load ~ts: ~0p", [Node, M, Other])}).

%% What code:which/1 says on the node for a module bridge loaded.
origin(M) ->
    lists:flatten(io_lib:format("loaded by ~p over distribution: ~p", [node(), M])).

%% ---------------------------------------------------------------------------
%% node_bench: the agent runs it on the node and stops it at the deadline;
%% this side waits a little longer, so the agent's answer comes first.

bench(Args) ->
    Node = node_arg(Args),
    T = timeout_arg(Args),
    Agent = module_name(bin_arg(<<"agent">>, Args)),
    Request = case arg(<<"bench">>, Args) of
                  L when is_list(L) -> L;
                  _ -> throw({bad_arg, <<"argument bench must be a list">>})
              end,
    case remote(Node, Agent, bench, [Request, T], T + 5000) of
        {ok, Reply} -> {ok, Reply};
        {error, {Class, Message}} when is_atom(Class), is_binary(Message) ->
            {error, {reply_class(Class), Message}};
        Other ->
            {error, {failed, format("~ts answered a bench with ~0P", [Node, Other, 8])}}
    end.

%% The agent answers with bridge_ops' classes, plus timeout.
reply_class(C) when C =:= bad_request; C =:= unknown_op; C =:= unsupported; C =:= timeout -> C;
reply_class(_) -> failed.

%% ---------------------------------------------------------------------------
%% node_purge: delete every module first (the agent's guard keeps running in
%% old code), then purge each, which kills whatever still runs in them, the
%% guard included. The reply lists any module still present, so the driver
%% can say so rather than assume.

purge(Node, Mods, T) ->
    _ = [remote(Node, code, delete, [M], T) || M <- Mods],
    _ = [remote(Node, code, purge, [M], T) || M <- Mods],
    Left = [M || M <- Mods,
                 remote(Node, code, is_loaded, [M], T) =/= false
                     orelse remote(Node, erlang, check_old_code, [M], T)],
    {ok, [{left, [atom_to_binary(M, utf8) || M <- Left]}]}.

try_purge(Node, Mods, T) ->
    try purge(Node, Mods, T) catch throw:_ -> error end.

%% ---------------------------------------------------------------------------
%% Calls into a node. Only the class of a failure and the function's name
%% go into the message.

remote(Node, M, F, A, T) ->
    try
        erpc:call(Node, M, F, A, T)
    catch
        error:{erpc, noconnection} ->
            throw({node_error, nodedown, format("~ts is no longer connected", [Node])});
        error:{erpc, timeout} ->
            throw({node_error, timeout,
                   format("~ts did not answer ~p:~p within ~b ms", [Node, M, F, T])});
        error:{exception, Reason, _Stack} ->
            throw({node_error, failed,
                   format("~ts: ~p:~p failed: ~0P", [Node, M, F, Reason, 8])});
        Class:Reason ->
            throw({node_error, failed,
                   format("~ts: ~p:~p: ~p ~0P", [Node, M, F, Class, Reason, 8])})
    end.

%% For facts an older release lacks (emu_flavor before OTP 24, crypto:info/0
%% before 24.2): the default instead of a failed probe. A lost node still
%% fails.
try_remote(Node, M, F, A, T, Default) ->
    try
        remote(Node, M, F, A, T)
    catch
        throw:{node_error, failed, _} -> Default
    end.

%% Fun() in a process of its own, given at most TimeoutMs.
within(TimeoutMs, Fun) ->
    Self = self(),
    {Pid, Ref} = spawn_monitor(fun() -> Self ! {self(), Fun()} end),
    receive
        {Pid, Result} -> erlang:demonitor(Ref, [flush]), {ok, Result};
        {'DOWN', Ref, process, Pid, _} -> crashed
    after TimeoutMs ->
        exit(Pid, kill),
        erlang:demonitor(Ref, [flush]),
        timeout
    end.

bin(B) when is_binary(B) -> B;
bin(L) when is_list(L) -> unicode:characters_to_binary(L);
bin(A) when is_atom(A) -> atom_to_binary(A, utf8).

value_bin(V) when is_atom(V); is_binary(V); is_integer(V) -> V;
value_bin(V) when is_list(V) -> unicode:characters_to_binary(V);
value_bin(V) -> format("~0p", [V]).
