%% bridge_ops: the closed set of operations the Erlang worker serves, and how
%% a request's arguments become a measured call.
%%
%% bridge_worker answers ping and stop itself and hands every other request
%% to handle/2, in a process of its own. A request is data: operation, call
%% and algorithm names arrive as binaries and are looked up in closed tables
%% (here and in bridge_api); anything else is refused with an error reply.
%% Nothing in a request is ever evaluated.
%%
%% Who does what: bridge_args reads the arguments, bridge_api chooses the
%% crypto API and names it, bridge_loops builds the call and its loop,
%% bridge_measure times the loop, bridge_info describes the node.
-module(bridge_ops).

-export([greeting/0, handle/2]).
-export_type([error_class/0, error_reply/0, reply/0]).

-import(bridge_args, [arg/2, bin_arg/2, bins_arg/3, pos_int/4, opt_int/5, printable/1]).

%% Bounds on what a request may ask for, so a bad request cannot tie the
%% worker up for hours: at most 100,000 samples of at most 60 s each.
-define(MAX_SAMPLES, 100000).
-define(MAX_SAMPLE_NS, 60000000000).
-define(MAX_LOOPS, 1000000000).
%% Random bytes per call, PBKDF2 iterations per call: bounds of the same kind.
-define(MAX_RAND_BYTES, 64 * 1024 * 1024).
-define(MAX_ITERATIONS, 100000000).
%% The CPUs a TLS cell's client or server is given: as many as erl's +S takes.
-define(MAX_CPUS, 1024).

-type error_class() :: bad_request | unknown_op | unknown_call | unsupported | failed.
-type error_reply() :: {error, {error_class(), binary()}}.
%% The result of an operation, a proplist or a refusal; bridge_worker adds
%% the request's Id.
-type reply() :: {ok, [{atom(), term()}, ...]} | error_reply().

-spec greeting() -> bridge_info:greeting().
greeting() ->
    bridge_info:greeting().

-spec handle(binary(), bridge_args:args()) -> reply().
handle(<<"info">>, _Args) ->
    {ok, bridge_info:info()};
handle(<<"bench">>, Args) ->
    bench(Args);
handle(<<"tc">>, Args) ->
    tc(Args);
handle(<<"conc">>, Args) ->
    conc(Args);
handle(Op, _Args) ->
    {error, {unknown_op, <<"unknown operation: ", (printable(Op))/binary>>}}.

%% ---------------------------------------------------------------------------
%% bench: one call, measured. Reply: api, loops, samples (ns each), output,
%% warmup_ns. An optional load_permille (1..1000, default 1000) bounds the
%% share of one scheduler the measurement keeps busy (bridge_measure:run/3):
%% the driver sends it only to a node it measures over distribution.

bench(Args) ->
    case prepare(Args) of
        {ok, Api, {Once, Loop}, Params, Permille} ->
            case safe_once(Once) of
                {ok, Output} ->
                    {{Loops, Durations, Spent}, Probed, Metered} =
                        measured(Loop, Params, Permille),
                    {ok, [{api, bridge_api:api_name(Api)}, {loops, Loops}, {samples, Durations},
                          {output, Output}, {warmup_ns, Spent} | probed(Probed) ++ Metered]};
                {error, _} = E ->
                    E
            end;
        {error, _} = E ->
            E
    end.

%% A TLS cell's server CPU, per sample (bridge_tls:server_meter/0), beside
%% the probe's figures; the client measures with the schedulers of its CPUs
%% (bridge_tls:measuring/1).
measured(Loop, Params, Permille) ->
    case bridge_tls_meter() of
        none ->
            {Samples, Probed} = bridge_measure:run_probed(Loop, Params, Permille),
            {Samples, Probed, []};
        Meter ->
            Run = fun() -> bridge_measure:run_metered(Loop, Params, Permille, Meter) end,
            {Samples, Probed, Server} = (tls_module()):measuring(Run),
            {Samples, Probed, [{server_cpu_ns, Server}]}
    end.

%% Through a variable, as tls/3 calls bridge_tls: the agent loaded into a
%% running node does not carry it.
bridge_tls_meter() ->
    Tls = tls_module(),
    case erlang:function_exported(Tls, server_meter, 0) of
        true -> Tls:server_meter();
        false -> none
    end.

%% Per sample: the CPU, CPU ns and run-queue wait ns of the thread that ran
%% the window (bridge_measure:run_probed/3), when /proc says.
probed(none) -> [];
probed({Cpus, CpuNs, WaitNs}) -> [{cpus, Cpus}, {cpu_ns, CpuNs}, {wait_ns, WaitNs}].

%% The first call doubles as the correctness probe: an algorithm this
%% OpenSSL lacks fails here, once, with a clear reason.
safe_once(Once) ->
    try Once() of
        Out when is_binary(Out) -> {ok, Out}
    catch
        error:{notsup, _, Desc} -> {error, {unsupported, bridge_args:format("~ts", [Desc])}};
        error:notsup -> {error, {unsupported, <<"not supported by this crypto library">>}};
        error:{badarg, _, Desc} -> {error, {bad_request, bridge_args:format("~ts", [Desc])}};
        error:{bridge_user, Message} -> {error, {failed, Message}};
        Class:Reason -> {error, {failed, bridge_args:format("~p:~0p", [Class, Reason])}}
    end.

prepare(Args) ->
    try
        Call = arg(<<"call">>, Args),
        Params = {pos_int(<<"warmup_ns">>, Args, 0, ?MAX_SAMPLE_NS),
                  pos_int(<<"sample_ns">>, Args, 1, ?MAX_SAMPLE_NS),
                  pos_int(<<"samples">>, Args, 1, ?MAX_SAMPLES),
                  %% loops > 0: a later round of an interleaved run; reuse the
                  %% loop count calibrated in the first round.
                  opt_int(<<"loops">>, Args, 0, 0, ?MAX_LOOPS)},
        Permille = opt_int(<<"load_permille">>, Args, 1000, 1, 1000),
        case prepare_call(Call, Args) of
            {ok, Api, Timed} -> {ok, Api, Timed, Params, Permille};
            {error, _} = E -> E
        end
    catch
        throw:{bad_arg, Message} -> {error, {bad_request, Message}}
    end.

%% Each call reads its arguments in a fixed order, which decides the error a
%% request with several faults gets.
prepare_call(<<"mac">>, Args) ->
    Data = bin_arg(<<"data">>, Args),
    Key = bin_arg(<<"key">>, Args),
    MacBytes = pos_int(<<"mac_bytes">>, Args, 0, 64),
    with_digest(Args, fun(Dg) ->
        case bridge_api:mac_api(fun erlang:function_exported/3, MacBytes) of
            none ->
                {error, {unsupported, <<"no HMAC function: crypto:mac/4 needs OTP 22.1+, crypto:hmac/3 was removed in OTP 24">>}};
            Api ->
                {ok, Api, bridge_loops:mac(Api, Dg, Key, Data, MacBytes)}
        end
    end);
prepare_call(<<"mac_stream">>, Args) ->
    Data = bin_arg(<<"data">>, Args),
    Key = bin_arg(<<"key">>, Args),
    MacBytes = pos_int(<<"mac_bytes">>, Args, 0, 64),
    with_digest(Args, fun(Dg) ->
        case bridge_api:stream_api(fun erlang:function_exported/3) of
            none -> {error, {unsupported, <<"no streaming HMAC API in this crypto">>}};
            Api -> {ok, Api, bridge_loops:mac_stream(Api, Dg, Key, Data, MacBytes)}
        end
    end);
prepare_call(<<"mac_key">>, Args) ->
    Key = bin_arg(<<"key">>, Args),
    with_digest(Args, fun(Dg) ->
        case bridge_api:stream_api(fun erlang:function_exported/3) of
            none -> {error, {unsupported, <<"no streaming HMAC API in this crypto">>}};
            mac_init -> {ok, mac_key, bridge_loops:mac_key(mac_init, Dg, Key)};
            hmac_init -> {ok, hmac_key, bridge_loops:mac_key(hmac_init, Dg, Key)}
        end
    end);
prepare_call(<<"nif_floor">>, Args) ->
    MacBytes = pos_int(<<"mac_bytes">>, Args, 0, 64),
    with_digest(Args, fun(Dg) ->
        %% As many bytes as the MAC this scenario makes.
        Size = case MacBytes of
                   0 -> byte_size(crypto:hash(Dg, <<>>));
                   _ -> MacBytes
               end,
        {ok, exor, bridge_loops:nif_floor(binary:copy(<<0>>, Size))}
    end);
prepare_call(<<"cipher">>, Args) ->
    Data = bin_arg(<<"data">>, Args),
    Key = bin_arg(<<"key">>, Args),
    IV = bin_arg(<<"iv">>, Args),
    case bridge_api:cipher(bin_arg(<<"cipher">>, Args)) of
        {ok, {Cipher, Mode}} ->
            case bridge_api:cipher_api(fun erlang:function_exported/3, Mode) of
                none -> {error, {unsupported, <<"no cipher API for this mode in this crypto">>}};
                Api -> {ok, Api, bridge_loops:cipher(Api, Cipher, Key, IV, Data)}
            end;
        {error, _} = E ->
            E
    end;
prepare_call(<<"sign">>, Args) ->
    Msg = bin_arg(<<"data">>, Args),
    Priv = bin_arg(<<"key">>, Args),
    with_curve(Args, fun(Curve, Dg) -> {ok, sign, bridge_loops:sign(Dg, Curve, Msg, Priv)} end);
prepare_call(<<"verify">>, Args) ->
    Msg = bin_arg(<<"data">>, Args),
    Pub = bin_arg(<<"pub">>, Args),
    Sig = bin_arg(<<"sig">>, Args),
    with_curve(Args, fun(Curve, Dg) ->
        {ok, verify, bridge_loops:verify(Dg, Curve, Msg, Sig, Pub)}
    end);
prepare_call(<<"hash_file">>, Args) ->
    Path = bin_arg(<<"path">>, Args),
    Chunk = pos_int(<<"chunk">>, Args, 1, 64 * 1024 * 1024),
    with_digest(Args, fun(Dg) ->
        case bridge_api:hash_api(fun erlang:function_exported/3) of
            none -> {error, {unsupported, <<"crypto:hash_init/1 is missing">>}};
            hash -> {ok, hash_file, bridge_loops:hash_file(Dg, Path, Chunk)}
        end
    end);
prepare_call(<<"hash">>, Args) ->
    Data = bin_arg(<<"data">>, Args),
    with_digest(Args, fun(Dg) ->
        case bridge_api:hash_api(fun erlang:function_exported/3) of
            none -> {error, {unsupported, <<"crypto:hash/2 is missing">>}};
            hash -> {ok, hash, bridge_loops:hash(Dg, Data)}
        end
    end);
prepare_call(<<"rand_bytes">>, Args) ->
    N = pos_int(<<"count">>, Args, 1, ?MAX_RAND_BYTES),
    {ok, strong_rand_bytes, bridge_loops:rand_bytes(N)};
prepare_call(<<"pbkdf2">>, Args) ->
    Pass = bin_arg(<<"key">>, Args),
    Salt = bin_arg(<<"iv">>, Args),
    Iter = pos_int(<<"count">>, Args, 1, ?MAX_ITERATIONS),
    Len = pos_int(<<"key_bytes">>, Args, 1, 1024),
    with_digest(Args, fun(Dg) ->
        case bridge_api:pbkdf2_api(fun erlang:function_exported/3) of
            none -> {error, {unsupported, missing(<<"crypto:pbkdf2_hmac/5 came in OTP 24.2">>)}};
            pbkdf2_hmac -> {ok, pbkdf2_hmac, bridge_loops:pbkdf2(Dg, Pass, Salt, Iter, Len)}
        end
    end);
prepare_call(<<"aead_reuse">>, Args) ->
    Data = bin_arg(<<"data">>, Args),
    Key = bin_arg(<<"key">>, Args),
    IV = bin_arg(<<"iv">>, Args),
    with_aead(Args, fun(C) -> {ok, aead_init, bridge_loops:aead_reuse(C, Key, IV, Data)} end);
prepare_call(<<"aead_setup">>, Args) ->
    Key = bin_arg(<<"key">>, Args),
    with_aead(Args, fun(C) -> {ok, aead_init_only, bridge_loops:aead_setup(C, Key)} end);
prepare_call(<<"eddsa_sign">>, Args) ->
    Msg = bin_arg(<<"data">>, Args),
    Priv = bin_arg(<<"key">>, Args),
    with_table(fun bridge_api:ed_curve/1, Args, fun(Curve) ->
        {ok, sign, bridge_loops:eddsa_sign(Curve, Msg, Priv)}
    end);
prepare_call(<<"eddsa_verify">>, Args) ->
    Msg = bin_arg(<<"data">>, Args),
    Pub = bin_arg(<<"pub">>, Args),
    Sig = bin_arg(<<"sig">>, Args),
    with_table(fun bridge_api:ed_curve/1, Args, fun(Curve) ->
        {ok, verify, bridge_loops:eddsa_verify(Curve, Msg, Sig, Pub)}
    end);
prepare_call(<<"rsa_sign_pkcs1">>, Args) ->
    rsa_call(sign, pkcs1, Args);
prepare_call(<<"rsa_sign_pss">>, Args) ->
    rsa_call(sign, pss, Args);
prepare_call(<<"rsa_verify_pkcs1">>, Args) ->
    rsa_call(verify, pkcs1, Args);
prepare_call(<<"rsa_verify_pss">>, Args) ->
    rsa_call(verify, pss, Args);
prepare_call(<<"rsa_import">>, Args) ->
    Priv = bins_arg(<<"parts">>, Args, 8),
    case bridge_api:import_api(fun erlang:function_exported/3) of
        none -> {error, {unsupported, missing(<<"crypto:privkey_to_pubkey/2 came in OTP 20.2">>)}};
        Api -> {ok, Api, bridge_loops:rsa_import(Priv)}
    end;
prepare_call(<<"agree">>, Args) ->
    Priv = bin_arg(<<"key">>, Args),
    PeerPub = bin_arg(<<"pub">>, Args),
    with_table(fun bridge_api:agreement_curve/1, Args, fun(Curve) ->
        {ok, compute_key, bridge_loops:agree(Curve, PeerPub, Priv)}
    end);
prepare_call(<<"agree_fresh">>, Args) ->
    PeerPub = bin_arg(<<"pub">>, Args),
    with_table(fun bridge_api:agreement_curve/1, Args, fun(Curve) ->
        {ok, generate_compute, bridge_loops:agree_fresh(Curve, PeerPub)}
    end);
%% The opt-in alternatives (bridge_alt).
prepare_call(<<"rand_bytes_rand">>, Args) ->
    N = pos_int(<<"count">>, Args, 1, ?MAX_RAND_BYTES),
    case bridge_alt:has_rand_bytes() of
        false -> {error, {unsupported, missing(<<"rand:bytes/1 came in OTP 24.1">>)}};
        true -> {ok, rand_bytes, bridge_alt:rand_bytes(N)}
    end;
prepare_call(<<"pbkdf2_mac">>, Args) ->
    pbkdf2_alt(pbkdf2_mac, Args);
prepare_call(<<"pbkdf2_mac_stream">>, Args) ->
    pbkdf2_alt(pbkdf2_mac_stream, Args);
prepare_call(<<"hash_stream">>, Args) ->
    Data = bin_arg(<<"data">>, Args),
    with_digest(Args, fun(Dg) -> {ok, hash_stream, bridge_alt:hash_stream(Dg, Data)} end);
prepare_call(<<"pk_sign">>, Args) ->
    Msg = bin_arg(<<"data">>, Args),
    Priv = bin_arg(<<"key">>, Args),
    Pub = bin_arg(<<"pub">>, Args),
    with_public_key(Args, fun(Curve, Dg) ->
        {ok, pk_sign, bridge_alt:pk_sign(Dg, Curve, Msg, {Priv, Pub})}
    end);
prepare_call(<<"pk_verify">>, Args) ->
    Msg = bin_arg(<<"data">>, Args),
    Pub = bin_arg(<<"pub">>, Args),
    Sig = bin_arg(<<"sig">>, Args),
    with_public_key(Args, fun(Curve, Dg) ->
        {ok, pk_verify, bridge_alt:pk_verify(Dg, Curve, Msg, Sig, Pub)}
    end);
%% TLS handshakes (the tls kind): a listener on 127.0.0.1 for the cell.
prepare_call(<<"tls13">>, Args) ->
    tls('tlsv1.3', false, Args);
prepare_call(<<"tls12">>, Args) ->
    tls('tlsv1.2', false, Args);
prepare_call(<<"tls13_resume">>, Args) ->
    tls('tlsv1.3', true, Args);
prepare_call(<<"tls12_resume">>, Args) ->
    tls('tlsv1.2', true, Args);
%% The user's expressions: only in a node bridge started with them
%% (bridge_user). The module is named through a variable, so that the agent
%% loaded into a running node (bridge_agent, renamed) does not carry it:
%% there it is not loaded, and the call is refused.
prepare_call(<<"user">>, Args) ->
    User = user_module(),
    case code:ensure_loaded(User) of
        {module, User} -> User:prepare(Args);
        _ -> {error, {unknown_call, <<"unknown call: user (no user code in this node)">>}}
    end;
prepare_call(Other, _Args) ->
    {error, {unknown_call, <<"unknown call: ", (printable(Other))/binary>>}}.

user_module() -> bridge_user.

%% The TLS module is named through a variable too: the agent loaded into a
%% running node (--node) does not carry it, so no listener is ever opened in
%% the user's node; there the call is refused.
tls(Version, Resumed, Args) ->
    Mutual = opt_int(<<"client_auth">>, Args, 0, 0, 1) =:= 1,
    Client = case Mutual of
                 true -> #{client_cert => bin_arg(<<"client_cert">>, Args),
                           client_key => bin_arg(<<"client_key">>, Args),
                           client_ca => bin_arg(<<"client_ca">>, Args)};
                 false -> #{}
             end,
    Spec = Client#{version => Version, resumed => Resumed,
                   group => bin_arg(<<"group">>, Args),
                   cert_type => bin_arg(<<"tls_cert">>, Args),
                   client_auth => Mutual,
                   resumption => opt_int(<<"resumption">>, Args, 0, 0, 1) =:= 1,
                   cert => bin_arg(<<"cert">>, Args),
                   key => bin_arg(<<"cert_key">>, Args),
                   ca => bin_arg(<<"ca">>, Args),
                   client_cpus => opt_int(<<"client_cpus">>, Args, 0, 0, ?MAX_CPUS),
                   server_cpus => opt_int(<<"server_cpus">>, Args, 0, 0, ?MAX_CPUS)},
    Tls = tls_module(),
    case code:ensure_loaded(Tls) of
        {module, Tls} -> Tls:prepare(Spec);
        _ -> {error, {unsupported, <<"TLS handshakes run in a node bridge starts, not over --node">>}}
    end.

tls_module() -> bridge_tls.

%% PBKDF2 in Erlang over crypto's MAC functions: crypto:mac/4 and
%% mac_init/3 came in OTP 22.1 (crypto 4.6).
pbkdf2_alt(Api, Args) ->
    Pass = bin_arg(<<"key">>, Args),
    Salt = bin_arg(<<"iv">>, Args),
    Iter = pos_int(<<"count">>, Args, 1, ?MAX_ITERATIONS),
    Len = pos_int(<<"key_bytes">>, Args, 1, 1024),
    with_digest(Args, fun(Dg) ->
        case bridge_api:stream_api(fun erlang:function_exported/3) of
            mac_init -> {ok, Api, bridge_alt:pbkdf2(Api, Dg, Pass, Salt, Iter, Len)};
            _ -> {error, {unsupported, missing(<<"crypto:mac/4 and mac_init/3 came in OTP 22.1">>)}}
        end
    end).

%% public_key is an application of its own (Debian: erlang-public-key).
with_public_key(Args, Fun) ->
    case bridge_alt:has_public_key() of
        false ->
            {error, {unsupported, missing(<<"the public_key application is not installed">>)}};
        true ->
            with_curve(Args, Fun)
    end.

%% An unsupported call's reason names the release it ran on.
missing(What) ->
    <<What/binary, "; this node is OTP ", (list_to_binary(erlang:system_info(otp_release)))/binary>>.

with_aead(Args, Fun) ->
    case bridge_api:cipher(bin_arg(<<"cipher">>, Args)) of
        {ok, {C, aead}} ->
            case bridge_api:aead_reuse_api(fun erlang:function_exported/3) of
                none ->
                    {error, {unsupported, missing(<<"no reusable AEAD context before OTP 28:"
                                                    " crypto_one_time_aead_init/4 came in 28.0,"
                                                    " and crypto_init/4 refuses AEAD ciphers">>)}};
                aead_init ->
                    Fun(C)
            end;
        {ok, {_, cbc}} ->
            {error, {bad_request, <<"not an AEAD cipher">>}};
        {error, _} = E ->
            E
    end.

%% A name looked up in one of bridge_api's closed tables (the "curve" argument).
with_table(Table, Args, Fun) ->
    case Table(bin_arg(<<"curve">>, Args)) of
        {ok, Value} -> Fun(Value);
        {error, _} = E -> E
    end.

%% RSA: PKCS#1 v1.5 through sign/4 and verify/5; PSS with the salt length the
%% driver gives and MGF1 over the message digest, through sign/5 and verify/6.
rsa_call(Role, Padding, Args) ->
    Msg = bin_arg(<<"data">>, Args),
    Priv = bins_arg(<<"parts">>, Args, 8),
    {Opts, SigKey} =
        case Padding of
            pkcs1 -> {[], <<"sig">>};
            pss -> {pss, <<"sig_pss">>}
        end,
    Sig = case Role of
              verify -> bin_arg(SigKey, Args);
              sign -> <<>>
          end,
    Salt = case Padding of
               pss -> pos_int(<<"salt_bytes">>, Args, 0, 512);
               pkcs1 -> 0
           end,
    with_digest(Args, fun(Dg) ->
        Options = case Opts of
                      [] -> [];
                      pss -> [{rsa_padding, rsa_pkcs1_pss_padding}, {rsa_pss_saltlen, Salt},
                              {rsa_mgf1_md, Dg}]
                  end,
        case {Role, Options} of
            {sign, []} -> {ok, sign, bridge_loops:rsa_sign(Dg, Msg, Priv, [])};
            {sign, _} -> {ok, sign_opts, bridge_loops:rsa_sign(Dg, Msg, Priv, Options)};
            {verify, []} ->
                {ok, verify, bridge_loops:rsa_verify(Dg, Msg, Sig, lists:sublist(Priv, 2), [])};
            {verify, _} ->
                {ok, verify_opts,
                 bridge_loops:rsa_verify(Dg, Msg, Sig, lists:sublist(Priv, 2), Options)}
        end
    end).

with_digest(Args, Fun) ->
    case bridge_api:digest(bin_arg(<<"digest">>, Args)) of
        {ok, Dg} -> Fun(Dg);
        {error, _} = E -> E
    end.

%% The curve is checked before the digest, so an unknown curve wins.
with_curve(Args, Fun) ->
    case {bridge_api:curve(bin_arg(<<"curve">>, Args)),
          bridge_api:digest(bin_arg(<<"digest">>, Args))} of
        {{ok, Curve}, {ok, Dg}} -> Fun(Curve, Dg);
        {{error, _} = E, _} -> E;
        {_, {error, _} = E} -> E
    end.

%% ---------------------------------------------------------------------------
%% conc: one call made by N processes at once over common time windows
%% (bridge_concurrency). Reply: api, level, batch, windows, latency_ns,
%% probe_ns, probe_idle_ns, sched, schedulers_online,
%% dirty_cpu_schedulers_online, clock_ns, output, span_ns (with cpu_ns and
%% wait_ns where /proc says), and with races > 0, race_calls and race_ns.

-define(MAX_WORKERS, 1024).
-define(MAX_RACES, 1000).

conc(Args) ->
    try
        Params = #{workers => pos_int(<<"workers">>, Args, 1, ?MAX_WORKERS),
                   warmup_ns => pos_int(<<"warmup_ns">>, Args, 0, ?MAX_SAMPLE_NS),
                   window_ns => pos_int(<<"window_ns">>, Args, 1000000, ?MAX_SAMPLE_NS),
                   windows => pos_int(<<"windows">>, Args, 1, ?MAX_SAMPLES),
                   batch => opt_int(<<"batch">>, Args, 0, 0, ?MAX_LOOPS),
                   idle_probe_ms => opt_int(<<"idle_probe_ms">>, Args, 0, 0, 10000),
                   same_output => opt_int(<<"same_output">>, Args, 1, 0, 1) =:= 1,
                   race_calls => opt_int(<<"race_calls">>, Args, 0, 0, ?MAX_LOOPS),
                   races => opt_int(<<"races">>, Args, 0, 0, ?MAX_RACES)},
        case prepare_call(arg(<<"call">>, Args), Args) of
            {ok, Api, {Once, Loop}} ->
                case safe_once(Once) of
                    {ok, _} ->
                        case bridge_concurrency:run(Once, Loop, Params) of
                            {ok, Reply} -> {ok, [{api, bridge_api:api_name(Api)} | Reply]};
                            {error, _} = E -> E
                        end;
                    {error, _} = E ->
                        E
                end;
            {error, _} = E ->
                E
        end
    catch
        throw:{bad_arg, Message} -> {error, {bad_request, Message}}
    end.

%% ---------------------------------------------------------------------------
%% tc: the erlang-questions thread's own timer:tc harness (bridge_measure:tc/2)
%% on an HMAC or a digest. Reply: api, n, then the thread's statistics.

tc(Args) ->
    try
        N = pos_int(<<"n">>, Args, 3, 100000000),
        Data = bin_arg(<<"data">>, Args),
        case arg(<<"call">>, Args) of
            <<"mac">> ->
                Key = bin_arg(<<"key">>, Args),
                L = pos_int(<<"mac_bytes">>, Args, 0, 64),
                with_digest(Args, fun(Dg) ->
                    case bridge_api:mac_api(fun erlang:function_exported/3, L) of
                        none -> {error, {unsupported, <<"no HMAC function in this crypto">>}};
                        Api -> tc_reply(Api, bridge_loops:mac_mfa(Api, Dg, Key, Data, L), N)
                    end
                end);
            <<"hash">> ->
                with_digest(Args, fun(Dg) -> tc_reply(hash, {crypto, hash, [Dg, Data]}, N) end);
            Other ->
                {error, {unknown_call, <<"tc has no call ", (printable(Other))/binary>>}}
        end
    catch
        throw:{bad_arg, Message} -> {error, {bad_request, Message}}
    end.

tc_reply(Api, MFA, N) ->
    {ok, [{api, bridge_api:api_name(Api)}, {n, N} | bridge_measure:tc(MFA, N)]}.
