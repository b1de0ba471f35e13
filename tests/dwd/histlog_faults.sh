# tests/dwd/histlog_faults.sh - damage a dwd state directory the way bad luck or an operator would
# (issue 13 rows 1-2), for tests/dwd/run.sh and tests/dwd/crash.sh (sourced, not run).
#
# inject_fault MODE STATE_DIR: MODE is
#   flip      invert one random byte of a random record of the newest segment that has a
#             record after it (damage followed by valid records: corruption)
#   delete    remove the newest segment
#   zero      truncate the newest segment to 0 bytes
#   truncate  cut the newest segment's last record off
# Sets fault_lost (the seqs of the records the fault destroyed that the directory's checkpoint
# does not cover, space-separated, maybe empty) and
# fault_desc; returns 1 (and changes nothing) when the newest segment has no record to damage.
# Record layout (runtime/histlog.h): a 48-byte segment header, then records of 32 + len bytes:
# u32 len at +8, u32 flags at +12, u64 seq at +16.

# seg_load FILE: its bytes into seg_bytes (one decimal per element)
seg_load() { mapfile -t seg_bytes < <(od -An -v -tu1 -w1 "$1" | tr -d ' '); }
seg_u32() { local o=$1; echo $(( seg_bytes[o] | seg_bytes[o+1] << 8 | seg_bytes[o+2] << 16 | seg_bytes[o+3] << 24 )); }
seg_u64() {   # seqs stay far below 2^63
    local o=$1 v=0 k
    for k in 7 6 5 4 3 2 1 0; do v=$(( v << 8 | seg_bytes[o+k] )); done
    echo "$v"
}
# seg_records FILE: rec_off, rec_len, rec_seq (arrays) of the event records that fit in FILE
seg_records() {
    seg_load "$1"
    rec_off=(); rec_len=(); rec_seq=()
    local size=${#seg_bytes[@]} off=48 len
    while [ $((off + 32)) -le "$size" ]; do
        len=$(seg_u32 $((off + 8)))
        [ $((off + 32 + len)) -le "$size" ] || break
        if [ "$(seg_u32 $((off + 12)))" -eq 0 ]; then
            rec_off+=("$off"); rec_len+=("$len"); rec_seq+=("$(seg_u64 $((off + 16)))")
        fi
        off=$((off + 32 + len))
    done
}
# flip_byte FILE OFFSET: invert the byte at OFFSET
flip_byte() {
    local b
    b=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
    printf "\\$(printf '%03o' $(( b ^ 255 )))" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

inject_fault() {
    local mode=$1 state=$2 seg n k at
    fault_lost=""; fault_desc=""
    seg=$(ls "$state"/seg-*.log 2>/dev/null | tail -n 1)
    [ -n "$seg" ] || return 1
    seg_records "$seg"
    n=${#rec_off[@]}
    case $mode in
        flip)
            [ "$n" -ge 2 ] || return 1
            k=$(( RANDOM % (n - 1) ))
            at=$(( rec_off[k] + RANDOM % (32 + rec_len[k]) ))
            flip_byte "$seg" "$at"
            fault_lost=${rec_seq[k]}
            fault_desc="byte $at of $(basename "$seg") flipped (record seq ${rec_seq[k]}, $((n - k - 1)) records after it)" ;;
        delete|zero)
            [ "$n" -ge 1 ] || return 1
            fault_lost=${rec_seq[*]}
            if [ "$mode" = delete ]; then rm -f "$seg"; else : > "$seg"; fi
            fault_desc="$(basename "$seg") $([ "$mode" = delete ] && echo deleted || echo emptied) ($n records)" ;;
        truncate)
            [ "$n" -ge 1 ] || return 1
            truncate -s "${rec_off[n - 1]}" "$seg"
            fault_lost=${rec_seq[n - 1]}
            fault_desc="the last record (seq ${rec_seq[n - 1]}) cut off $(basename "$seg")" ;;
        *) echo "inject_fault: unknown mode $mode" >&2; return 1 ;;
    esac
    # records below the checkpoint are in its state: destroying them loses nothing
    local ck q kept=""
    ck=$(ls "$state"/ckpt-*.ckpt 2>/dev/null | tail -n 1)
    if [ -n "$ck" ]; then
        ck=$(basename "$ck" .ckpt); ck=$((16#${ck#ckpt-}))
        for q in $fault_lost; do [ "$q" -ge "$ck" ] && kept="$kept $q"; done
        [ "${kept# }" != "$fault_lost" ] && fault_desc="$fault_desc, the checkpoint at seq $ck covering the rest"
        fault_lost=${kept# }
    fi
    return 0
}
