#!/usr/bin/env bash
# Runs mcp-stdio-guard for the action (action.yml, step "run"), and runs the same outside GitHub
# when the runner's variables are set (tests/distribution.rs does).
#
# Every input arrives in the environment (never spliced into a script) and is split into words
# by xargs, which honours quotes and backslashes and expands nothing: `node "my server.js"` is two
# words, `$(rm -rf ~)` is one harmless word.
#
#   INPUT_COMMAND | INPUT_CONFIG | INPUT_MCP_CONFIG   the runtime check (one of them), or
#   | INPUT_REGISTRY
#   INPUT_SCAN                                        the static scan of these paths (with a runtime
#                                                     input: its --scan path)
#   INPUT_MERGE                                       or: the JSON reports of sharded runs to
#                                                     join (files, or folders of *.json files)
#   INPUT_SHARD                                       with a runtime input: --shard K/N
#   INPUT_PROFILE, INPUT_ARGS                         --profile, and extra arguments
#   INPUT_FAIL_ON                                     error (default): fail on error findings, as the
#                                                     guard's exit code; warning: on warnings too;
#                                                     never: report only (usage and internal
#                                                     failures still fail)
#   INPUT_SARIF_FILE, INPUT_JUNIT_FILE                report files (SARIF defaults to a temp file
#                                                     when INPUT_UPLOAD_SARIF is true)
#   INPUT_CATEGORY                                    code-scanning category (default
#                                                     mcp-stdio-guard/<scan|runtime>)
#   MCP_STDIO_GUARD_BIN, MCP_STDIO_GUARD_SOURCE,      from the install step
#   MCP_STDIO_GUARD_SHA256
#
# Writes the outputs exit-code, findings, sarif-file, junit-file, json-file, category, failed to
# GITHUB_OUTPUT and a summary to GITHUB_STEP_SUMMARY; exits 0 (action.yml fails the action after
# the SARIF upload when `failed` is true), or 1 when the inputs themselves are wrong.
set -euo pipefail

fail() {
  echo "::error title=mcp-stdio-guard::$*"
  exit 1
}
output() { [[ -z ${GITHUB_OUTPUT:-} ]] || echo "$1=$2" >>"$GITHUB_OUTPUT"; }
summary() { [[ -z ${GITHUB_STEP_SUMMARY:-} ]] || echo "$*" >>"$GITHUB_STEP_SUMMARY"; }

bin=${MCP_STDIO_GUARD_BIN:?MCP_STDIO_GUARD_BIN is not set (the install step sets it)}
temp=${RUNNER_TEMP:-${TMPDIR:-/tmp}}

# Portable to the bash 3.2 of macOS: no namerefs, no mapfile, empty arrays expanded as
# ${a[@]+"${a[@]}"}.
words_file=$(mktemp)
trap 'rm -f "$words_file"' EXIT
# split_words INPUT_NAME: the words of $INPUT_NAME, as a shell splits quoted words, without any
# expansion, NUL-separated into $words_file.
split_words() {
  local text=${!1:-}
  : >"$words_file"
  [[ -n ${text//[[:space:]]/} ]] || return 0
  printf '%s\n' "$text" | xargs printf '%s\0' >"$words_file" ||
    fail "cannot split ${1#INPUT_} into words: check its quotes"
}

split_words INPUT_COMMAND
command_words=()
while IFS= read -r -d '' w; do command_words+=("$w"); done <"$words_file"
split_words INPUT_ARGS
extra_args=()
while IFS= read -r -d '' w; do extra_args+=("$w"); done <"$words_file"
split_words INPUT_SCAN
scan_paths=()
while IFS= read -r -d '' w; do scan_paths+=("$w"); done <"$words_file"
split_words INPUT_MERGE
merge_inputs=()
while IFS= read -r -d '' w; do merge_inputs+=("$w"); done <"$words_file"

runtime_inputs=0
[[ ${#command_words[@]} -eq 0 ]] || runtime_inputs=$((runtime_inputs + 1))
[[ -z ${INPUT_CONFIG:-} ]] || runtime_inputs=$((runtime_inputs + 1))
[[ -z ${INPUT_MCP_CONFIG:-} ]] || runtime_inputs=$((runtime_inputs + 1))
[[ -z ${INPUT_REGISTRY:-} ]] || runtime_inputs=$((runtime_inputs + 1))
((runtime_inputs <= 1)) || fail "set only one of command, config, mcp-config and registry"
if [[ ${#merge_inputs[@]} -gt 0 ]]; then
  if ((runtime_inputs > 0)) || [[ ${#scan_paths[@]} -gt 0 ]]; then
    fail "merge joins the reports of sharded runs: do not also set command, config, mcp-config, registry or scan"
  fi
  mode=merge
elif ((runtime_inputs == 1)); then
  mode=runtime
elif [[ ${#scan_paths[@]} -gt 0 ]]; then
  mode=scan
else
  fail "nothing to check: set command (or config, mcp-config, registry) for the runtime check, scan for the static scan, or merge for the reports of sharded runs"
fi

shard=${INPUT_SHARD:-}
if [[ -n $shard ]]; then
  [[ $mode == runtime ]] || fail "shard applies to a runtime check (registry, mcp-config, config or command)"
  [[ $shard =~ ^[0-9]+/[0-9]+$ ]] || fail "shard must be K/N, e.g. 2/4, not '$shard'"
fi

# The reports to merge: files as given, folders as their *.json files (sorted; nothing else is
# expanded).
merge_files=()
for given in ${merge_inputs[@]+"${merge_inputs[@]}"}; do
  if [[ -d $given ]]; then
    found=0
    while IFS= read -r -d '' f; do
      merge_files+=("$f")
      found=$((found + 1))
    done < <(find "$given" -maxdepth 1 -type f -name '*.json' -print0 | sort -z)
    ((found > 0)) || fail "merge: the folder '$given' holds no .json report"
  elif [[ -f $given ]]; then
    merge_files+=("$given")
  else
    fail "merge: '$given' is neither a report file nor a folder of reports"
  fi
done

fail_on=${INPUT_FAIL_ON:-error}
case $fail_on in
error | warning | never) ;;
*) fail "fail-on must be error, warning or never, not '$fail_on'" ;;
esac

# --------------------------------------------------------------------------- the command line
args=()
if [[ $mode == scan ]]; then
  args+=(scan)
  [[ -z ${INPUT_PROFILE:-} ]] || echo "::warning title=mcp-stdio-guard::profile applies to the runtime check; ignored for the scan"
elif [[ $mode == merge ]]; then
  args+=(merge)
  [[ -z ${INPUT_PROFILE:-} ]] || echo "::warning title=mcp-stdio-guard::profile applies to the runtime check; ignored for merge"
else
  [[ -z $shard ]] || args+=(--shard "$shard")
  [[ -z ${INPUT_PROFILE:-} ]] || args+=(--profile "$INPUT_PROFILE")
  [[ -z ${INPUT_CONFIG:-} ]] || args+=(--config "$INPUT_CONFIG")
  [[ -z ${INPUT_MCP_CONFIG:-} ]] || args+=(--mcp-config "$INPUT_MCP_CONFIG")
  [[ -z ${INPUT_REGISTRY:-} ]] || args+=(--registry "$INPUT_REGISTRY")
  if [[ ${#scan_paths[@]} -gt 1 ]]; then
    fail "with a runtime check, scan takes one path (the server's source folder), not ${#scan_paths[@]}"
  elif [[ ${#scan_paths[@]} -eq 1 ]]; then
    args+=(--scan "${scan_paths[0]}")
  fi
fi
args+=(${extra_args[@]+"${extra_args[@]}"})

# Report files. Written with the guard's file flags where it has them (it still prints text);
# a guard without them gets --format json on stdout instead, and no SARIF/JUnit.
if [[ $mode == scan || $mode == merge ]]; then
  help=$("$bin" "$mode" --help 2>/dev/null || true)
else
  help=$("$bin" --help 2>/dev/null || true)
fi
has_flag() { [[ $help == *"$1 "* || $help == *"$1="* ]]; }

report_dir="$temp/mcp-stdio-guard-reports"
mkdir -p "$report_dir"
# A shard's report is named after it: the merge job downloads every shard's into one folder.
json_file="$report_dir/$mode${shard:+-shard-${shard%/*}-of-${shard#*/}}.json"
rm -f "$json_file"
json_on_stdout=false
if has_flag --json-file; then
  args+=(--json-file "$json_file")
else
  json_on_stdout=true
  args+=(--format json)
fi

sarif_file=${INPUT_SARIF_FILE:-}
if [[ -z $sarif_file && ${INPUT_UPLOAD_SARIF:-true} == true ]]; then
  sarif_file="$report_dir/$mode.sarif"
fi
junit_file=${INPUT_JUNIT_FILE:-}
for report in sarif junit; do
  file_var="${report}_file"
  [[ -n ${!file_var} ]] || continue
  if has_flag "--$report"; then
    mkdir -p "$(dirname "${!file_var}")"
    rm -f "${!file_var}"
    args+=("--$report" "${!file_var}")
  else
    echo "::warning title=mcp-stdio-guard::$("$bin" --version) cannot write --$report reports; no $report file"
    printf -v "$file_var" '%s' ''
  fi
done

if [[ $mode == runtime && ${#command_words[@]} -gt 0 ]]; then
  args+=(-- "${command_words[@]}")
elif [[ $mode == scan ]]; then
  args+=(-- "${scan_paths[@]}")
elif [[ $mode == merge ]]; then
  args+=(-- "${merge_files[@]}")
fi

# ------------------------------------------------------------------------------------- the run
echo "mcp-stdio-guard ${args[*]}" >&2
set +e
if $json_on_stdout; then
  "$bin" "${args[@]}" >"$json_file"
  code=$?
else
  "$bin" "${args[@]}"
  code=$?
fi
set -e

findings=""
errors=0
warnings=0
if [[ -s $json_file ]] && command -v jq >/dev/null 2>&1 && jq -e . "$json_file" >/dev/null 2>&1; then
  errors=$(jq '[.summary.issueCounts.error // 0] | add' "$json_file")
  warnings=$(jq '[.summary.issueCounts.warning // 0] | add' "$json_file")
  findings=$((errors + warnings))
  if $json_on_stdout; then
    # The log still shows every finding.
    jq -r '(.issues // [])[], (.findings // [])[] | "[\(.severity)] \(.code // .rule): \(if .file then "\(.file):\(.line):\(.column): " else "" end)\(.message)"' "$json_file" >&2 || true
  fi
else
  echo "::warning title=mcp-stdio-guard::no JSON report to count findings from (jq missing, or the guard wrote none)"
fi
[[ -s $sarif_file ]] || sarif_file=""
[[ -s $junit_file ]] || junit_file=""
# A merge is the runtime check of every shard: the same category as one runtime run.
category=${INPUT_CATEGORY:-mcp-stdio-guard/${mode/merge/runtime}}

failed=false
case $code in
0) [[ $fail_on != warning || $warnings -eq 0 ]] || failed=true ;;
1) [[ $fail_on == never ]] || failed=true ;;
*) failed=true ;;
esac

output exit-code "$code"
output findings "$findings"
output sarif-file "$sarif_file"
output junit-file "$junit_file"
output json-file "$([[ -s $json_file ]] && echo "$json_file")"
output category "$category"
output failed "$failed"

# --------------------------------------------------------------------------------- the summary
case $code in
0) verdict=$([[ $warnings -gt 0 ]] && echo "pass with warnings" || echo pass) ;;
1) verdict=fail ;;
2) verdict="usage or config error (nothing was checked)" ;;
*) verdict="internal failure" ;;
esac
case ${MCP_STDIO_GUARD_SOURCE:-} in
release) installed="release archive, sha256 \`${MCP_STDIO_GUARD_SHA256:0:16}…\` verified against the committed checksums" ;;
cargo) installed="built with cargo install --locked" ;;
*) installed="given binary" ;;
esac
summary "### mcp-stdio-guard $mode: $verdict"
summary ""
summary "| | |"
summary "| --- | --- |"
summary "| version | $("$bin" --version 2>/dev/null | sed 's/^mcp-stdio-guard //') ($installed) |"
summary "| findings | ${findings:-?} ($errors errors, $warnings warnings) |"
summary "| exit code | $code (fail-on: $fail_on) |"
[[ -z $sarif_file ]] || summary "| SARIF | \`$sarif_file\` (category \`$category\`) |"
[[ -z $junit_file ]] || summary "| JUnit | \`$junit_file\` |"
summary ""

if $failed; then
  echo "mcp-stdio-guard: $verdict (exit $code, fail-on $fail_on)" >&2
fi
exit 0
