#!/usr/bin/env bash
# Builds the libFuzzer targets and fuzzes each one for a while. See Tests/Fuzz/README.md.
#
#   Tests/Fuzz/run.sh [seconds-per-target] [target...]
#
# Targets: http-parser, websocket-decoder, json, jwt-claims, stun, rtp, sdp, srtp, ogg-opus, media-link (default: all
# ten, one after the other).
# Environment:
#   FUZZ_WORK   build and work directory (default: .build/fuzz, git-ignored); the corpus each target
#               grows lives there, copied afresh from Tests/Fuzz/corpus on every run
#   FUZZ_JOBS   how many targets fuzz at the same time (default 1)
#   SWIFTC      the compiler (default: swiftc on PATH, else /opt/swift/usr/bin/swiftc)
#
# Exits 1 if any target found a crash, a timeout (hang) or ran out of memory; the input that did
# it is kept in $FUZZ_WORK/artifacts/<target>/ and its path printed. Exits 2 if a build fails.
set -euo pipefail

seconds=${1:-60}
[[ $seconds =~ ^[1-9][0-9]*$ ]] || { echo "usage: $0 [seconds-per-target] [target...]" >&2; exit 2; }
shift $(( $# > 0 ? 1 : 0 ))
all_targets=(http-parser websocket-decoder json jwt-claims stun rtp sdp srtp ogg-opus media-link)
targets=("$@")
(( ${#targets[@]} > 0 )) || targets=("${all_targets[@]}")

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
fuzz_dir=$root/Tests/Fuzz
media=$root/Sources/ParlorMedia
work=${FUZZ_WORK:-$root/.build/fuzz}
jobs=${FUZZ_JOBS:-1}
swiftc=${SWIFTC:-$(command -v swiftc || echo /opt/swift/usr/bin/swiftc)}
swift_bin=$(dirname "$(readlink -f "$swiftc")")
linker=()
[[ -x $swift_bin/ld.lld ]] && linker=(-use-ld=lld) # quieter than gold with the sanitizer runtimes

sources_for() {
    case $1 in
        http-parser) echo "ParlorCodec $root/Sources/ParlorCodec/*.swift $fuzz_dir/HTTPParserFuzz.swift" ;;
        websocket-decoder) echo "ParlorCodec $root/Sources/ParlorCodec/*.swift $fuzz_dir/WebSocketDecoderFuzz.swift" ;;
        # JSONWriter scans strings with ParlorCodec's ByteWords, compiled in as part of the target's module.
        json) echo "ParlorJSON $root/Sources/ParlorProtocol/JSON/JSONParser.swift $root/Sources/ParlorProtocol/JSON/JSONValue.swift" \
                   "$root/Sources/ParlorProtocol/JSON/JSONWriter.swift $root/Sources/ParlorCodec/ByteWords.swift $fuzz_dir/JSONFuzz.swift" ;;
        jwt-claims) echo "ParlorJWTClaims $root/Sources/ParlorProtocol/JSON/JSONParser.swift $root/Sources/ParlorProtocol/JSON/JSONValue.swift" \
                         "$root/Sources/ParlorProtocol/JSON/JSONWriter.swift $root/Sources/ParlorCodec/ByteWords.swift" \
                         "$root/Sources/ParlorRooms/TokenClaims.swift" \
                         "$root/Sources/ParlorRooms/TextRules.swift $fuzz_dir/JWTClaimsFuzz.swift" ;;
        # ParlorMedia's parsers, each with only the files it needs; -I finds the COpenSSL module (HMAC-SHA1 for
        # STUN's MESSAGE-INTEGRITY, RAND_bytes for ICE credentials), which links libssl/libcrypto itself.
        stun) echo "ParlorMediaSTUN -I $root/Sources/COpenSSL $media/BigEndian.swift $media/TransportAddress.swift" \
                   "$media/CRC32.swift $media/HMACSHA1.swift $media/STUNMessage.swift $media/STUNAttribute.swift" \
                   "$media/STUNMessage+Parsing.swift $media/STUNMessage+Serializing.swift $media/ICECredentials.swift" \
                   "$media/ICELiteResponder.swift $fuzz_dir/STUNFuzz.swift" ;;
        rtp) echo "ParlorMediaRTP $media/BigEndian.swift $media/RTPHeader.swift $media/RTPHeaderExtensions.swift" \
                  "$media/RTPRewriter.swift $media/RTCPPacket.swift $media/RTCPReports.swift $fuzz_dir/RTPFuzz.swift" ;;
        sdp) echo "ParlorMediaSDP -I $root/Sources/COpenSSL $media/BigEndian.swift $media/TransportAddress.swift" \
                  "$media/ICECredentials.swift $media/DTLSFingerprint.swift $media/MediaDirection.swift" \
                  "$media/SessionDescription.swift $media/SessionDescription+Parsing.swift" \
                  "$media/ServerSessionDescription.swift $fuzz_dir/SDPFuzz.swift" ;;
        # ParlorSRTP's unprotect (and protect/unprotect round trips); -I finds COpenSSL (AES, GCM, HMAC).
        srtp) echo "ParlorSRTPFuzz -I $root/Sources/COpenSSL $root/Sources/ParlorSRTP/*.swift $fuzz_dir/SRTPFuzz.swift" ;;
        # ParlorRecording's reader and track writer; -I finds COpus (libopus reads packet durations and encodes the
        # silence frames), which links libopus itself.
        ogg-opus) echo "ParlorRecordingFuzz -I $root/Sources/COpus $root/Sources/ParlorRecording/*.swift $fuzz_dir/OggOpusFuzz.swift" ;;
        # ParlorMediaLink's open and offer verify (and seal/open round trips, the replay window against a model);
        # -I finds COpenSSL (X25519, HKDF, HMAC-SHA256, AES-GCM).
        media-link) echo "ParlorMediaLinkFuzz -I $root/Sources/COpenSSL $root/Sources/ParlorMediaLink/*.swift $fuzz_dir/MediaLinkFuzz.swift" ;;
        *) echo "unknown target: $1 (known: ${all_targets[*]})" >&2; return 1 ;;
    esac
}

for target in "${targets[@]}"; do
    sources_for "$target" >/dev/null || exit 2
done
mkdir -p "$work/bin" "$work/logs"

# Build: each target is its module's sources plus the target file, compiled as one module, so the
# target can check internal state. -parse-as-library: libFuzzer provides main.
for target in "${targets[@]}"; do
    read -r module files <<<"$(sources_for "$target")"
    echo "building $target"
    # shellcheck disable=SC2086 # $files is a list of paths (no spaces in them) and globs
    if ! "$swiftc" -sanitize=fuzzer,address -parse-as-library -O -g -swift-version 6 "${linker[@]}" \
            -module-name "$module" $files -o "$work/bin/$target" >"$work/logs/$target.build.log" 2>&1; then
        cat "$work/logs/$target.build.log" >&2
        echo "build of $target failed" >&2
        exit 2
    fi
done

# Swift's own backtracer is slow and would race libFuzzer's crash handling; ASan and libFuzzer
# print the stack (symbolized with llvm-symbolizer) and save the input.
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS=${ASAN_OPTIONS:-symbolize=1}
[[ -x $swift_bin/llvm-symbolizer ]] && export ASAN_SYMBOLIZER_PATH=$swift_bin/llvm-symbolizer

fuzz_one() {
    local target=$1 corpus=$work/corpus/$1 artifacts=$work/artifacts/$1/ dict=()
    rm -rf "$corpus"
    mkdir -p "$corpus" "$artifacts"
    cp "$fuzz_dir/corpus/$target"/* "$corpus"/
    [[ -f $fuzz_dir/dict/$target.dict ]] && dict=(-dict="$fuzz_dir/dict/$target.dict")
    local start=$SECONDS status=0
    "$work/bin/$target" "$corpus" "${dict[@]}" \
        -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$artifacts" >"$work/logs/$target.log" 2>&1 || status=$?
    echo $((SECONDS - start)) >"$work/logs/$target.seconds"
    return $status
}

summarize() {
    local target=$1 status=$2 log=$work/logs/$1.log
    local execs cov ft artifact
    # (Each lookup may find nothing, e.g. when a seed crashes before the first status line.)
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    cov=$(grep -Eo 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1 || true)
    artifact=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
    printf '%-18s %-6s executions: %-10s %-22s time: %ss\n' "$target" \
        "$([[ $status == 0 ]] && echo ok || echo FAILED)" "${execs:-?}" "${cov:-cov: ? ft: ?}" \
        "$(cat "$work/logs/$target.seconds" 2>/dev/null || echo '?')"
    if [[ $status != 0 ]]; then
        grep -E 'invariant violated|Fatal error|Swift runtime failure|ERROR: (AddressSanitizer|libFuzzer)|SUMMARY' "$log" \
            | head -5 | sed 's/^/    /' || true
        echo "    input saved as ${artifact:-(none; see the log)}"
        echo "    log: $log"
        echo "    reproduce: SWIFT_BACKTRACE=enable=no $work/bin/$target ${artifact:-<input>}"
    fi
}

echo "fuzzing ${targets[*]} for ${seconds}s each (${jobs} at a time); work dir $work"
declare -A status
running=()
for target in "${targets[@]}"; do
    fuzz_one "$target" &
    running+=("$!:$target")
    if (( ${#running[@]} >= jobs )); then
        entry=${running[0]}
        running=("${running[@]:1}")
        if wait "${entry%%:*}"; then status[${entry#*:}]=0; else status[${entry#*:}]=$?; fi
    fi
done
for entry in "${running[@]}"; do
    if wait "${entry%%:*}"; then status[${entry#*:}]=0; else status[${entry#*:}]=$?; fi
done

failed=0
for target in "${targets[@]}"; do
    summarize "$target" "${status[$target]}"
    [[ ${status[$target]} == 0 ]] || failed=1
done
exit $failed
