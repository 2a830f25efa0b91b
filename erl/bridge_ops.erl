%% bridge_ops: the closed set of operations the Erlang worker serves, the
%% choice of crypto API for the running OTP release, and the timed loops.
%%
%% Nothing here evaluates code from a request. Operation, call and
%% algorithm names arrive as binaries and are looked up in the tables
%% below; anything else is refused with an error reply.
-module(bridge_ops).

-export([greeting/0, handle/2]).
%% Exported for the EUnit tests, which force every API branch.
-export([mac_api/2, hash_api/1, digest/1, calibrate/3, measure/3, measure_fixed/4,
         crypto_available/0, crypto_info/1, stream_api/1, thread_stats/1, cipher_api/2]).

-define(MAX_SAMPLES, 100000).
-define(MAX_SAMPLE_NS, 60000000000).
-define(MAX_LOOPS, 1000000000).

%% ---------------------------------------------------------------------------
%% Requests

greeting() ->
    {Available, Reason} = crypto_available(),
    [{kind, erlang},
     {otp_release, bin(erlang:system_info(otp_release))},
     {crypto, Available},
     {crypto_error, Reason}].

handle(<<"info">>, _Args) ->
    {ok, info()};
handle(<<"bench">>, Args) ->
    bench(Args);
handle(<<"tc">>, Args) ->
    tc(Args);
handle(Op, _Args) ->
    {error, {unknown_op, <<"unknown operation: ", (printable(Op))/binary>>}}.

%% ---------------------------------------------------------------------------
%% info: provenance of this node

info() ->
    {Available, Reason} = crypto_available(),
    [{otp_release, bin(erlang:system_info(otp_release))},
     {otp_version, otp_version()},
     {erts_version, bin(erlang:system_info(version))},
     {emu_flavor, emu_flavor()},
     {emu_type, catch_atom(fun() -> erlang:system_info(emu_type) end)},
     {os_pid, bin(os:getpid())},
     {schedulers_online, erlang:system_info(schedulers_online)},
     {clock_resolution_hz, clock_resolution()},
     {crypto, Available},
     {crypto_error, Reason}]
    ++ case Available of
           true -> crypto_details();
           false -> []
       end.

crypto_details() ->
    _ = application:load(crypto),
    Vsn = case application:get_key(crypto, vsn) of
              {ok, V} -> bin(V);
              _ -> <<"unknown">>
          end,
    Exported = fun erlang:function_exported/3,
    [{crypto_vsn, Vsn},
     {info_lib, [{Name, Num, Text} || {Name, Num, Text} <- crypto:info_lib()]},
     {crypto_info, crypto_info(Exported)},
     {apis, [{mac, api_name(mac_api(Exported, 10))},
             {mac_full, api_name(mac_api(Exported, 0))},
             {hash, api_name(hash_api(Exported))}]}].

%% crypto:info/0 (OTP 24.2+) returns a map; the port codec on the Python side
%% cannot decode maps, so it travels as a proplist of binaries. Before 24.2
%% only info_lib/0 exists, and this is [].
crypto_info(Exported) ->
    case Exported(crypto, info, 0) of
        true ->
            case catch crypto:info() of
                M when is_map(M) -> [{K, value_bin(V)} || {K, V} <- maps:to_list(M)];
                _ -> []
            end;
        false ->
            []
    end.

%% crypto can be missing (erlang-base without erlang-crypto) or fail to load
%% its NIF (no libcrypto). Say which, so the driver can tell the user.
crypto_available() ->
    case code:ensure_loaded(crypto) of
        {module, crypto} ->
            case catch crypto:info_lib() of
                L when is_list(L) -> {true, <<>>};
                Other -> {false, bin(io_lib:format("crypto loaded but unusable: ~0p", [Other]))}
            end;
        {error, nofile} ->
            {false, <<"the crypto application is not installed">>};
        {error, Why} ->
            {false, bin(io_lib:format("the crypto module failed to load: ~0p", [Why]))}
    end.

otp_version() ->
    Rel = erlang:system_info(otp_release),
    File = filename:join([code:root_dir(), "releases", Rel, "OTP_VERSION"]),
    case file:read_file(File) of
        {ok, Text} -> bin(string:trim(binary_to_list(Text)));
        _ -> bin(Rel)
    end.

%% emu_flavor (jit | emu) exists from OTP 24; older releases are all "emu".
emu_flavor() ->
    case catch erlang:system_info(emu_flavor) of
        A when is_atom(A) -> A;
        _ -> emu
    end.

clock_resolution() ->
    case catch erlang:system_info(os_monotonic_time_source) of
        L when is_list(L) -> proplists:get_value(resolution, L, 0);
        _ -> 0
    end.

%% ---------------------------------------------------------------------------
%% API selection. Exported(M, F, A) is erlang:function_exported/3 in real use;
%% the tests pass a fake to force each branch.

%% MacBytes > 0 truncates the MAC (crypto:macN/5, crypto:hmac/4);
%% 0 means the full MAC (crypto:mac/4, crypto:hmac/3).
mac_api(Exported, MacBytes) ->
    _ = code:ensure_loaded(crypto),
    case {Exported(crypto, macN, 5), Exported(crypto, hmac, 4), MacBytes > 0} of
        {true, _, true} -> macN;
        {true, _, false} -> mac;
        {false, true, true} -> hmac4;
        {false, true, false} -> hmac3;
        {false, false, _} -> none
    end.

%% The streaming MAC API, per message: a keyed state cannot be reused after
%% mac_finalN (a second final gives wrong bytes), and crypto has no way to
%% copy one, so the key is set up for every message here too.
stream_api(Exported) ->
    _ = code:ensure_loaded(crypto),
    case {Exported(crypto, mac_init, 3), Exported(crypto, hmac_init, 2)} of
        {true, _} -> mac_init;
        {false, true} -> hmac_init;
        _ -> none
    end.

stream_once(mac_init, Dg, K, D, L) ->
    S = crypto:mac_init(hmac, Dg, K),
    _ = crypto:mac_update(S, D),
    case L of
        0 -> crypto:mac_final(S);
        _ -> crypto:mac_finalN(S, L)
    end;
stream_once(hmac_init, Dg, K, D, L) ->
    M = old_crypto(),
    S = M:hmac_update(M:hmac_init(Dg, K), D),
    case L of
        0 -> M:hmac_final(S);
        _ -> M:hmac_final_n(S, L)
    end.

stream_loop(0, _, _, _, _, _) -> ok;
stream_loop(N, Api, Dg, K, D, L) ->
    _ = stream_once(Api, Dg, K, D, L),
    stream_loop(N - 1, Api, Dg, K, D, L).

hash_api(Exported) ->
    _ = code:ensure_loaded(crypto),
    case Exported(crypto, hash, 2) of
        true -> hash;
        false -> none
    end.

api_name(macN) -> <<"crypto:macN/5">>;
api_name(mac) -> <<"crypto:mac/4">>;
api_name(hmac4) -> <<"crypto:hmac/4">>;
api_name(hmac3) -> <<"crypto:hmac/3">>;
api_name(hash) -> <<"crypto:hash/2">>;
api_name(sign) -> <<"crypto:sign/4">>;
api_name(verify) -> <<"crypto:verify/5">>;
api_name(hash_file) -> <<"crypto:hash_init/1 + hash_update/2 per file:read/2 chunk + hash_final/1">>;
api_name(one_time) -> <<"crypto:crypto_one_time/5">>;
api_name(one_time_aead) -> <<"crypto:crypto_one_time_aead/7">>;
api_name(block) -> <<"crypto:block_encrypt/4">>;
api_name(mac_init) -> <<"crypto:mac_init/3 + mac_update/2 + mac_finalN/2">>;
api_name(hmac_init) -> <<"crypto:hmac_init/2 + hmac_update/2 + hmac_final_n/2">>;
api_name(none) -> <<"none">>.

%% Ciphers by their OpenSSL names: {crypto's atom (OTP 22+), mode}.
cipher(<<"aes-128-cbc">>) -> {ok, {aes_128_cbc, cbc}};
cipher(<<"aes-256-cbc">>) -> {ok, {aes_256_cbc, cbc}};
cipher(<<"aes-128-gcm">>) -> {ok, {aes_128_gcm, aead}};
cipher(<<"aes-256-gcm">>) -> {ok, {aes_256_gcm, aead}};
cipher(Other) -> {error, {bad_request, <<"unknown cipher: ", (printable(Other))/binary>>}}.

%% crypto_one_time/5 and crypto_one_time_aead/7 from OTP 22.0; before that
%% (OTP 21) only block_encrypt/4, which OTP 24 removed.
cipher_api(Exported, Mode) ->
    _ = code:ensure_loaded(crypto),
    case {Mode, Exported(crypto, crypto_one_time, 5), Exported(crypto, crypto_one_time_aead, 7),
          Exported(crypto, block_encrypt, 4)} of
        {cbc, true, _, _} -> one_time;
        {aead, _, true, _} -> one_time_aead;
        {_, _, _, true} -> block;
        _ -> none
    end.

%% The tag is appended to the ciphertext, as `openssl enc` would lay it out.
cipher_once(one_time, C, K, IV, D) ->
    crypto:crypto_one_time(C, K, IV, D, true);
cipher_once(one_time_aead, C, K, IV, D) ->
    {CT, Tag} = crypto:crypto_one_time_aead(C, K, IV, D, <<>>, 16, true),
    <<CT/binary, Tag/binary>>;
cipher_once(block, C, K, IV, D) ->
    M = old_crypto(),
    case old_cipher(C) of
        {aead, Old} ->
            {CT, Tag} = M:block_encrypt(Old, K, IV, {<<>>, D, 16}),
            <<CT/binary, Tag/binary>>;
        Old ->
            M:block_encrypt(Old, K, IV, D)
    end.

old_cipher(aes_128_cbc) -> aes_cbc128;
old_cipher(aes_256_cbc) -> aes_cbc256;
old_cipher(aes_128_gcm) -> {aead, aes_gcm};
old_cipher(aes_256_gcm) -> {aead, aes_gcm}.

cipher_loop(0, _, _, _, _, _) -> ok;
cipher_loop(N, Api, C, K, IV, D) ->
    _ = cipher_once(Api, C, K, IV, D),
    cipher_loop(N - 1, Api, C, K, IV, D).

%% User-facing digest names (as in Python and OpenSSL) to crypto's atoms.
digest(<<"sha1">>) -> {ok, sha};
digest(<<"sha224">>) -> {ok, sha224};
digest(<<"sha256">>) -> {ok, sha256};
digest(<<"sha384">>) -> {ok, sha384};
digest(<<"sha512">>) -> {ok, sha512};
digest(<<"md5">>) -> {ok, md5};
digest(<<"sha3-256">>) -> {ok, sha3_256};
digest(<<"sha3-512">>) -> {ok, sha3_512};
digest(Other) -> {error, {bad_request, <<"unknown digest: ", (printable(Other))/binary>>}}.

%% ---------------------------------------------------------------------------
%% bench: one call, measured

bench(Args) ->
    case prepare(Args) of
        {ok, Api, Once, Loop, Params} ->
            case safe_once(Once) of
                {ok, Output} -> measure_reply(Api, Output, Loop, Params);
                {error, _} = E -> E
            end;
        {error, _} = E ->
            E
    end.

measure_reply(Api, Output, Loop, {WarmupNs, SampleNs, Samples, FixedLoops}) ->
    {Loops, Durations, Spent} =
        case FixedLoops of
            0 -> measure(Loop, {WarmupNs, SampleNs}, Samples);
            _ -> measure_fixed(Loop, WarmupNs, FixedLoops, Samples)
        end,
    {ok, [{api, api_name(Api)}, {loops, Loops}, {samples, Durations},
          {output, Output}, {warmup_ns, Spent}]}.

%% The first call doubles as the correctness probe: an algorithm this
%% OpenSSL lacks fails here, once, with a clear reason.
safe_once(Once) ->
    try Once() of
        Out when is_binary(Out) -> {ok, Out}
    catch
        error:{notsup, _, Desc} -> {error, {unsupported, bin(io_lib:format("~ts", [Desc]))}};
        error:notsup -> {error, {unsupported, <<"not supported by this crypto library">>}};
        error:{badarg, _, Desc} -> {error, {bad_request, bin(io_lib:format("~ts", [Desc]))}};
        Class:Reason -> {error, {failed, bin(io_lib:format("~p:~0p", [Class, Reason]))}}
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
        prepare_call(Call, Args, Params)
    catch
        throw:{bad_arg, Message} -> {error, {bad_request, Message}}
    end.

prepare_call(<<"mac">>, Args, Params) ->
    Data = bin_arg(<<"data">>, Args),
    Key = bin_arg(<<"key">>, Args),
    MacBytes = pos_int(<<"mac_bytes">>, Args, 0, 64),
    with_digest(Args, fun(Dg) ->
        case mac_api(fun erlang:function_exported/3, MacBytes) of
            none ->
                {error, {unsupported, <<"no HMAC function: crypto:mac/4 needs OTP 22.1+, crypto:hmac/3 was removed in OTP 24">>}};
            Api ->
                {ok, Api, fun() -> mac_once(Api, Dg, Key, Data, MacBytes) end,
                 fun(N) -> mac_loop(Api, N, Dg, Key, Data, MacBytes) end, Params}
        end
    end);
prepare_call(<<"mac_stream">>, Args, Params) ->
    Data = bin_arg(<<"data">>, Args),
    Key = bin_arg(<<"key">>, Args),
    MacBytes = pos_int(<<"mac_bytes">>, Args, 0, 64),
    with_digest(Args, fun(Dg) ->
        case stream_api(fun erlang:function_exported/3) of
            none ->
                {error, {unsupported, <<"no streaming HMAC API in this crypto">>}};
            Api ->
                {ok, Api, fun() -> stream_once(Api, Dg, Key, Data, MacBytes) end,
                 fun(N) -> stream_loop(N, Api, Dg, Key, Data, MacBytes) end, Params}
        end
    end);
prepare_call(<<"cipher">>, Args, Params) ->
    Data = bin_arg(<<"data">>, Args),
    Key = bin_arg(<<"key">>, Args),
    IV = bin_arg(<<"iv">>, Args),
    case cipher(bin_arg(<<"cipher">>, Args)) of
        {ok, {Cipher, Mode}} ->
            case cipher_api(fun erlang:function_exported/3, Mode) of
                none ->
                    {error, {unsupported, <<"no cipher API for this mode in this crypto">>}};
                Api ->
                    {ok, Api, fun() -> cipher_once(Api, Cipher, Key, IV, Data) end,
                     fun(N) -> cipher_loop(N, Api, Cipher, Key, IV, Data) end, Params}
            end;
        {error, _} = E ->
            E
    end;
prepare_call(<<"sign">>, Args, Params) ->
    Msg = bin_arg(<<"data">>, Args),
    Priv = bin_arg(<<"key">>, Args),
    with_curve(Args, fun(Curve, Dg) ->
        Key = [Priv, Curve],
        {ok, sign, fun() -> crypto:sign(ecdsa, Dg, Msg, Key) end,
         fun(N) -> sign_loop(N, Dg, Msg, Key) end, Params}
    end);
prepare_call(<<"verify">>, Args, Params) ->
    Msg = bin_arg(<<"data">>, Args),
    Pub = bin_arg(<<"pub">>, Args),
    Sig = bin_arg(<<"sig">>, Args),
    with_curve(Args, fun(Curve, Dg) ->
        Key = [Pub, Curve],
        {ok, verify, fun() -> bool_bin(crypto:verify(ecdsa, Dg, Msg, Sig, Key)) end,
         fun(N) -> verify_loop(N, Dg, Msg, Sig, Key) end, Params}
    end);
prepare_call(<<"hash_file">>, Args, Params) ->
    %% The path names a file the driver generated in its private directory.
    Path = bin_arg(<<"path">>, Args),
    Chunk = pos_int(<<"chunk">>, Args, 1, 64 * 1024 * 1024),
    with_digest(Args, fun(Dg) ->
        case hash_api(fun erlang:function_exported/3) of
            none -> {error, {unsupported, <<"crypto:hash_init/1 is missing">>}};
            hash -> {ok, hash_file, fun() -> hash_file(Dg, Path, Chunk) end,
                     fun(N) -> hash_file_loop(N, Dg, Path, Chunk) end, Params}
        end
    end);
prepare_call(<<"hash">>, Args, Params) ->
    Data = bin_arg(<<"data">>, Args),
    with_digest(Args, fun(Dg) ->
        case hash_api(fun erlang:function_exported/3) of
            none -> {error, {unsupported, <<"crypto:hash/2 is missing">>}};
            hash -> {ok, hash, fun() -> crypto:hash(Dg, Data) end,
                     fun(N) -> hash_loop(N, Dg, Data) end, Params}
        end
    end);
prepare_call(Other, _Args, _Params) ->
    {error, {unknown_call, <<"unknown call: ", (printable(Other))/binary>>}}.

with_digest(Args, Fun) ->
    case digest(bin_arg(<<"digest">>, Args)) of
        {ok, Dg} -> Fun(Dg);
        {error, _} = E -> E
    end.

%% crypto:hmac/3,4 were removed in OTP 24. They are called through a module
%% held in a variable so that newer compilers do not warn about the removed
%% function; only OTP 21 - 23 ever take that branch.
mac_once(macN, Dg, K, D, L) -> crypto:macN(hmac, Dg, K, D, L);
mac_once(mac, Dg, K, D, _) -> crypto:mac(hmac, Dg, K, D);
mac_once(hmac4, Dg, K, D, L) -> M = old_crypto(), M:hmac(Dg, K, D, L);
mac_once(hmac3, Dg, K, D, _) -> M = old_crypto(), M:hmac(Dg, K, D).

old_crypto() -> crypto.

%% One loop per API, so that the timed loop makes the same call the user
%% would write, with no fun call per iteration.
mac_loop(macN, N, Dg, K, D, L) -> loop_macN(N, Dg, K, D, L);
mac_loop(mac, N, Dg, K, D, _) -> loop_mac(N, Dg, K, D);
mac_loop(hmac4, N, Dg, K, D, L) -> loop_hmac4(N, old_crypto(), Dg, K, D, L);
mac_loop(hmac3, N, Dg, K, D, _) -> loop_hmac3(N, old_crypto(), Dg, K, D).

loop_macN(0, _, _, _, _) -> ok;
loop_macN(N, Dg, K, D, L) -> _ = crypto:macN(hmac, Dg, K, D, L), loop_macN(N - 1, Dg, K, D, L).

loop_mac(0, _, _, _) -> ok;
loop_mac(N, Dg, K, D) -> _ = crypto:mac(hmac, Dg, K, D), loop_mac(N - 1, Dg, K, D).

loop_hmac4(0, _, _, _, _, _) -> ok;
loop_hmac4(N, M, Dg, K, D, L) -> _ = M:hmac(Dg, K, D, L), loop_hmac4(N - 1, M, Dg, K, D, L).

loop_hmac3(0, _, _, _, _) -> ok;
loop_hmac3(N, M, Dg, K, D) -> _ = M:hmac(Dg, K, D), loop_hmac3(N - 1, M, Dg, K, D).

%% ECDSA: keys as [PrivOrPub, CurveAtom]; crypto:sign/4 and verify/5 exist on
%% every OTP bridge supports (R16B01+).
with_curve(Args, Fun) ->
    case {curve(bin_arg(<<"curve">>, Args)), digest(bin_arg(<<"digest">>, Args))} of
        {{ok, Curve}, {ok, Dg}} -> Fun(Curve, Dg);
        {{error, _} = E, _} -> E;
        {_, {error, _} = E} -> E
    end.

curve(<<"p256">>) -> {ok, secp256r1};
curve(<<"p384">>) -> {ok, secp384r1};
curve(<<"p521">>) -> {ok, secp521r1};
curve(Other) -> {error, {bad_request, <<"unknown curve: ", (printable(Other))/binary>>}}.

bool_bin(true) -> <<1>>;
bool_bin(false) -> <<0>>.

sign_loop(0, _, _, _) -> ok;
sign_loop(N, Dg, Msg, Key) -> _ = crypto:sign(ecdsa, Dg, Msg, Key), sign_loop(N - 1, Dg, Msg, Key).

verify_loop(0, _, _, _, _) -> ok;
verify_loop(N, Dg, Msg, Sig, Key) ->
    _ = crypto:verify(ecdsa, Dg, Msg, Sig, Key),
    verify_loop(N - 1, Dg, Msg, Sig, Key).

%% A streaming digest of a file, as an application would write it: raw file
%% reads of Chunk bytes, each fed to hash_update.
hash_file(Dg, Path, Chunk) ->
    {ok, Fd} = file:open(Path, [read, raw, binary]),
    try
        hash_chunks(Fd, Chunk, crypto:hash_init(Dg))
    after
        ok = file:close(Fd)
    end.

hash_chunks(Fd, Chunk, State) ->
    case file:read(Fd, Chunk) of
        {ok, Bin} -> hash_chunks(Fd, Chunk, crypto:hash_update(State, Bin));
        eof -> crypto:hash_final(State)
    end.

hash_file_loop(0, _, _, _) -> ok;
hash_file_loop(N, Dg, Path, Chunk) ->
    _ = hash_file(Dg, Path, Chunk),
    hash_file_loop(N - 1, Dg, Path, Chunk).

hash_loop(0, _, _) -> ok;
hash_loop(N, Dg, D) -> _ = crypto:hash(Dg, D), hash_loop(N - 1, Dg, D).

%% ---------------------------------------------------------------------------
%% tc: the erlang-questions thread's own harness, to show what it can resolve.
%%   TC_L = tl([begin {T, _} = timer:tc(M, F, A), T end || _ <- lists:seq(1, N)]),
%%   Min, Max, Median = lists:nth(round((N - 1) / 2), lists:sort(TC_L)),
%%   Average = round(lists:sum(TC_L) / (N - 1))
%% in whole microseconds, exactly as posted (quirks included: the first call
%% is dropped, the median index is round((N-1)/2)).

tc(Args) ->
    try
        N = pos_int(<<"n">>, Args, 3, 100000000),
        Data = bin_arg(<<"data">>, Args),
        case arg(<<"call">>, Args) of
            <<"mac">> ->
                Key = bin_arg(<<"key">>, Args),
                L = pos_int(<<"mac_bytes">>, Args, 0, 64),
                with_digest(Args, fun(Dg) ->
                    case mac_api(fun erlang:function_exported/3, L) of
                        none -> {error, {unsupported, <<"no HMAC function in this crypto">>}};
                        Api -> tc_reply(Api, tc_mfa(Api, Dg, Key, Data, L), N)
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

tc_mfa(macN, Dg, K, D, L) -> {crypto, macN, [hmac, Dg, K, D, L]};
tc_mfa(mac, Dg, K, D, _) -> {crypto, mac, [hmac, Dg, K, D]};
tc_mfa(hmac4, Dg, K, D, L) -> {old_crypto(), hmac, [Dg, K, D, L]};
tc_mfa(hmac3, Dg, K, D, _) -> {old_crypto(), hmac, [Dg, K, D]}.

tc_reply(Api, {M, F, A}, N) ->
    TcL = tl([begin {T, _} = timer:tc(M, F, A), T end || _ <- lists:seq(1, N)]),
    {ok, [{api, api_name(Api)}, {n, N} | thread_stats(TcL)]}.

thread_stats(TcL) ->
    N = length(TcL) + 1,
    [{min_us, lists:min(TcL)},
     {max_us, lists:max(TcL)},
     {median_us, lists:nth(max(1, round((N - 1) / 2)), lists:sort(TcL))},
     {avg_us, round(lists:sum(TcL) / (N - 1))},
     {zero_us_calls, length([T || T <- TcL, T =:= 0])}].

%% ---------------------------------------------------------------------------
%% Measurement. The same procedure as bridge/pyops.py, so that both workers
%% are measured alike:
%%  1. warm-up and calibration: run the loop with 1, 2, 4, ... iterations
%%     until one run lasts at least half a sample and WarmupNs have passed;
%%     all of it is discarded;
%%  2. loops = iterations that make one run last about SampleNs;
%%  3. Samples runs of that many iterations, each timed on the monotonic
%%     clock in nanoseconds. The raw durations go back to the driver.

measure(Loop, {WarmupNs, SampleNs}, Samples) ->
    {N, T, Spent} = calibrate(Loop, WarmupNs, SampleNs),
    Loops = max(1, round(N * SampleNs / max(T, 1))),
    Durations = [timed(Loop, Loops) || _ <- lists:seq(1, Samples)],
    {Loops, Durations, Spent}.

%% A later round: warm up with the known loop count, then take the samples.
measure_fixed(Loop, WarmupNs, Loops, Samples) ->
    Spent = warm(Loop, Loops, WarmupNs, 0),
    {Loops, [timed(Loop, Loops) || _ <- lists:seq(1, Samples)], Spent}.

warm(_Loop, _Loops, WarmupNs, Spent) when Spent >= WarmupNs -> Spent;
warm(Loop, Loops, WarmupNs, Spent) -> warm(Loop, Loops, WarmupNs, Spent + timed(Loop, Loops)).

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
    erlang:monotonic_time(nanosecond) - T0.

%% ---------------------------------------------------------------------------
%% Argument helpers. Args is a list of {BinaryKey, Value}.

arg(Key, Args) ->
    case lists:keyfind(Key, 1, Args) of
        {Key, Value} -> Value;
        false -> throw({bad_arg, <<"missing argument: ", Key/binary>>})
    end.

opt_int(Key, Args, Default, Min, Max) ->
    case lists:keyfind(Key, 1, Args) of
        false -> Default;
        _ -> pos_int(Key, Args, Min, Max)
    end.

bin_arg(Key, Args) ->
    case arg(Key, Args) of
        B when is_binary(B) -> B;
        _ -> throw({bad_arg, <<"argument must be a binary: ", Key/binary>>})
    end.

pos_int(Key, Args, Min, Max) ->
    case arg(Key, Args) of
        I when is_integer(I), I >= Min, I =< Max -> I;
        _ -> throw({bad_arg, bin(io_lib:format("argument ~ts must be an integer in ~b..~b", [Key, Min, Max]))})
    end.

printable(B) when is_binary(B), byte_size(B) =< 40 -> B;
printable(<<B:40/binary, _/binary>>) -> <<B/binary, "...">>;
printable(_) -> <<"(not a binary)">>.

bin(B) when is_binary(B) -> B;
bin(L) -> unicode:characters_to_binary(L).

value_bin(V) when is_atom(V); is_binary(V); is_integer(V) -> V;
value_bin(V) when is_list(V) -> bin(V);
value_bin(V) -> bin(io_lib:format("~0p", [V])).

catch_atom(F) ->
    case catch F() of
        A when is_atom(A) -> A;
        _ -> unknown
    end.
