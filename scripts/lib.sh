# Shared by the scripts (sourced, not run): step headings, times, and progress
# for commands that are long and quiet.
#
#   source scripts/lib.sh
#
# Colour only on a terminal, and never with NO_COLOR set (https://no-color.org).

if [ -t 1 ] && [ -z "${NO_COLOR:-}" ] && [ "${TERM:-dumb}" != dumb ]; then
  _bold=$'\e[1m' _red=$'\e[31m' _dim=$'\e[2m' _reset=$'\e[0m'
else
  _bold='' _red='' _dim='' _reset=''
fi

# step TITLE...: the heading of a step.
step() { printf '\n%s== %s%s\n' "$_bold" "$*" "$_reset"; }

# say TEXT...: a line under a step (its outcome, what it skipped).
say() { printf '   %s\n' "$*"; }

# warn TEXT...: a line that must not be missed.
warn() { printf '   %s%s%s\n' "$_red" "$*" "$_reset"; }

# human_time SECONDS: "42 s", "3 min 05 s".
human_time() {
  if [ "$1" -lt 60 ]; then
    printf '%d s' "$1"
  else
    printf '%d min %02d s' $(($1 / 60)) $(($1 % 60))
  fi
}

# The hash of the named files and of every source file under the named
# folders (not what the build itself writes there: the labextension, the
# generated TypeScript, the version file that pip install writes).
inputs_hash() {
  find "$@" -type f ! -path '*/__pycache__/*' ! -path '*/.ipynb_checkpoints/*' ! -path '*/labextension/*' \
    ! -name '*.generated.ts' ! -name 'defaultSnippets.ts' ! -name '_version.py' -print0 2>/dev/null |
    sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1
}

# up_to_date STAMP HASH: the step that writes STAMP last succeeded with these
# inputs. Never on CI (CI=true), which runs every step.
up_to_date() {
  [ -z "${CI:-}" ] && [ -f "$1" ] && [ "$(cat "$1")" = "$2" ]
}

# VRAM_PROGRESS_S: how often, in seconds, a long command's progress is said
# where the output is no terminal (a log, CI), and after how long a silence a
# shown command gets a "still running" line. On a terminal the progress of a
# hidden command is one line, redrawn every second.
: "${VRAM_PROGRESS_S:=10}"

# progress LOG COMMAND...
#   COMMAND's output goes to LOG, not to the screen: for tools whose output is
#   all noise when they succeed (pip installing 150 packages, a build's log).
#   While it runs, a line says how long it has run and LOG's last line (what
#   pip is collecting, say). When it fails, LOG's end is printed.
# progress --replay LOG COMMAND...
#   The same, and LOG is printed whole once COMMAND ends: for tools that say
#   nothing until they end, and then little that matters (npm ci's warnings
#   and its count of packages).
# progress --show LOG COMMAND...
#   COMMAND's output is shown as it comes (and kept in LOG); after 10 s without
#   a line (VRAM_PROGRESS_S), a line says that it is still running, and for how long.
# progress --live LOG COMMAND...
#   For test runners, which show their own progress on a terminal (Playwright
#   the test it is in, jest the files it runs): there COMMAND runs as it is;
#   elsewhere (a log, CI), where they print a line only as a test or file ends,
#   as with --show.
# Then, but for --live, whose caller says the time: "done in …" where it took
# 5 s or more. Returns COMMAND's status.
# progress [MODE] --status REGEX LOG COMMAND...
#   The progress line shows the log's last line that REGEX matches (pip's
#   stages, not the line it ends its long install with).
progress() {
  local mode=hide status_lines=.
  case "$1" in --show | --replay | --live) mode=${1#--}; shift ;; esac
  if [ "$1" = --status ]; then status_lines=$2; shift 2; fi
  local log=$1
  shift
  if [ "$mode" = live ] && [ -t 1 ]; then
    "$@"
    return
  fi
  mkdir -p "$(dirname "$log")"
  : >"$log"
  local start=$SECONDS status=0
  _progress_ticker "$log" "$start" "$mode" "$status_lines" &
  local ticker=$!
  case "$mode" in
    show | live) if "$@" 2>&1 | tee "$log"; then status=0; else status=${PIPESTATUS[0]}; fi ;;
    *) "$@" >"$log" 2>&1 || status=$? ;;
  esac
  kill "$ticker" 2>/dev/null || true
  wait "$ticker" 2>/dev/null || true
  if [ -t 1 ] && [ "$mode" != show ]; then printf '\r\e[K'; fi  # the redrawn line
  [ "$mode" != live ] || return "$status"
  local took=$((SECONDS - start))
  if [ "$mode" = replay ]; then
    sed -e '/^[[:space:]]*$/d' -e 's/^/   /' "$log"
  fi
  if [ "$status" != 0 ]; then
    warn "failed (exit $status) after $(human_time "$took")"
    if [ "$mode" = hide ]; then
      say "the end of its log ($log):"
      tail -n 60 "$log" | sed 's/^/   | /'
    fi
  elif [ "$took" -ge 5 ]; then
    say "done in $(human_time "$took")"
  fi
  return "$status"
}

# The background half of progress: stops with the shell that started it.
_progress_ticker() {
  local log=$1 start=$2 mode=$3 status_lines=$4 parent=$$ tty=0 size last_size=-1
  local quiet_since=$SECONDS said=$SECONDS width line
  [ -t 1 ] && tty=1
  width=$(( ${COLUMNS:-$(tput cols 2>/dev/null || echo 100)} - 14 ))
  [ "$width" -ge 20 ] || width=20
  while sleep 1 && kill -0 "$parent" 2>/dev/null; do
    if [ "$mode" = show ] || [ "$mode" = live ]; then
      size=$(stat -c %s "$log" 2>/dev/null || echo 0)
      if [ "$size" != "$last_size" ]; then
        last_size=$size quiet_since=$SECONDS
      elif [ $((SECONDS - quiet_since)) -ge "$VRAM_PROGRESS_S" ] && [ $((SECONDS - said)) -ge "$VRAM_PROGRESS_S" ] &&
        # not in the middle of a line (pytest's dots), which it would cut
        { [ "$size" = 0 ] || [ -z "$(tail -c 1 "$log")" ]; }; then
        printf '   %s… still running, %s%s\n' "$_dim" "$(human_time $((SECONDS - start)))" "$_reset"
        said=$SECONDS
      fi
      continue
    fi
    [ "$tty" = 1 ] || [ $((SECONDS - said)) -ge "$VRAM_PROGRESS_S" ] || continue
    said=$SECONDS
    # The log's last line that says something (or that --status matches),
    # without colours or carriage returns, cut to the screen.
    line=$(tail -c 20000 "$log" 2>/dev/null | tr '\r' '\n' | sed -e 's/\x1b\[[0-9;]*[A-Za-z]//g' -e 's/^ *//' |
      grep -E "$status_lines" | tail -n 1 | cut -c "1-$width") || true
    [ -n "$line" ] || line="(no output yet)"
    if [ "$tty" = 1 ]; then
      printf '\r\e[K   %s%11s  %s%s' "$_dim" "$(human_time $((SECONDS - start)))" "$line" "$_reset"
    else
      printf '   %11s  %s\n' "$(human_time $((SECONDS - start)))" "$line"
    fi
  done
}
