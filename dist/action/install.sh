#!/usr/bin/env bash
# Installs the mcp-stdio-guard binary for the action (action.yml, step "install"), and runs the same
# outside GitHub when the runner's variables are set (tests/distribution.rs does).
#
# 1. target: RUNNER_OS/RUNNER_ARCH → a release target triple;
# 2. version: INPUT_VERSION, else the version in the Cargo.toml of the action's own checkout (the
#    action at a tag installs the release of that tag);
# 3. download mcp-stdio-guard-<target>.<tar.xz|zip> of release v<version> and verify it against
#    dist/checksums/<version>.sha256 COMMITTED in the action's repository: a checksum downloaded
#    from the same release as the archive proves nothing. A mismatch is refused, never retried
#    another way;
# 4. no committed checksum, no archive for the target, or the download failed: `cargo install
#    --locked` (of the action's own source when the versions match, else of the crate at that
#    version), unless INPUT_CARGO_INSTALL_FALLBACK is false.
#
# Inputs (environment): INPUT_VERSION, INPUT_CARGO_INSTALL_FALLBACK, RUNNER_OS, RUNNER_ARCH,
# RUNNER_TEMP, GITHUB_ACTION_PATH, ACTION_REPOSITORY (github.action_repository; when empty, read
# from the action's path .../_actions/<owner>/<repo>/<ref>, else GITHUB_REPOSITORY for
# `uses: ./`), GITHUB_SERVER_URL, GITHUB_OUTPUT, GITHUB_PATH, and
# MCP_STDIO_GUARD_RELEASE_URL: the folder holding v<version>/<archive> (default: the repository's
# release downloads; a mirror or a file:// folder is safe, the checksums are committed).
# Outputs: binary, version, target, source (release|cargo), sha256.
set -euo pipefail

fail() {
  # One line, as a workflow error annotation and on stderr.
  echo "::error title=mcp-stdio-guard install::$*"
  exit 1
}
note() { echo "mcp-stdio-guard install: $*" >&2; }
output() { [[ -z ${GITHUB_OUTPUT:-} ]] || echo "$1=$2" >>"$GITHUB_OUTPUT"; }

action_path=${GITHUB_ACTION_PATH:?GITHUB_ACTION_PATH is not set (the runner sets it for the action)}
temp=${RUNNER_TEMP:-${TMPDIR:-/tmp}}

# --------------------------------------------------------------------------------------- target
case "${RUNNER_OS:-}/${RUNNER_ARCH:-}" in
Linux/X64) target=x86_64-unknown-linux-gnu ;;
Linux/ARM64) target=aarch64-unknown-linux-gnu ;;
macOS/X64) target=x86_64-apple-darwin ;;
macOS/ARM64) target=aarch64-apple-darwin ;;
Windows/X64) target=x86_64-pc-windows-msvc ;;
*) target="" ;;
esac
exe=mcp-stdio-guard
archive=""
if [[ -n $target ]]; then
  if [[ $target == *windows* ]]; then
    exe=mcp-stdio-guard.exe
    archive="mcp-stdio-guard-$target.zip"
  else
    archive="mcp-stdio-guard-$target.tar.xz"
  fi
fi

# -------------------------------------------------------------------------------------- version
own_version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$action_path/Cargo.toml" | head -n 1)
version=${INPUT_VERSION:-}
version=${version#v}
[[ -n $version ]] || version=$own_version
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$ ]] ||
  fail "version '$version' is not a release version like 1.2.3"

install_dir="$temp/mcp-stdio-guard/$version/${target:-cargo}"
binary="$install_dir/bin/$exe"
mkdir -p "$install_dir/bin"

sha256_of() {
  if command -v sha256sum >/dev/null 2>&1; then sha256sum "$1"; else shasum -a 256 "$1"; fi | cut -d' ' -f1
}

finish() {
  local source=$1 digest=${2:-}
  "$binary" --version >/dev/null 2>&1 || fail "$binary does not run on this runner"
  output binary "$binary"
  output version "$version"
  output target "${target:-}"
  output source "$source"
  output sha256 "$digest"
  [[ -z ${GITHUB_PATH:-} ]] || dirname "$binary" >>"$GITHUB_PATH"
  note "$("$binary" --version) at $binary ($source${digest:+, sha256 $digest})"
  exit 0
}

# ------------------------------------------------------------------------- the release archive
why_not=""
checksums="$action_path/dist/checksums/$version.sha256"
if [[ -z $target ]]; then
  why_not="no release binary for runner ${RUNNER_OS:-?}/${RUNNER_ARCH:-?}"
elif [[ ! -f $checksums ]]; then
  why_not="no committed checksums for $version (dist/checksums/$version.sha256)"
else
  expected=$(awk -v name="$archive" '$2 == name || $2 == "*" name { print $1 }' "$checksums")
  if [[ -z $expected ]]; then
    why_not="dist/checksums/$version.sha256 lists no $archive"
  fi
fi

if [[ -z $why_not ]]; then
  repository=${ACTION_REPOSITORY:-}
  if [[ -z $repository && $action_path =~ /_actions/([^/]+)/([^/]+)/[^/]+/?$ ]]; then
    repository="${BASH_REMATCH[1]}/${BASH_REMATCH[2]}"
  fi
  repository=${repository:-${GITHUB_REPOSITORY:-}}
  base=${MCP_STDIO_GUARD_RELEASE_URL:-}
  if [[ -z $base ]]; then
    [[ -n $repository && -n ${GITHUB_SERVER_URL:-} ]] ||
      fail "cannot tell where the releases are: GITHUB_SERVER_URL or the action's repository is not set"
    base="$GITHUB_SERVER_URL/$repository/releases/download"
  fi
  url="$base/v$version/$archive"
  download="$install_dir/$archive"
  note "downloading $url"
  if curl --fail --silent --show-error --location --proto '=https,file' --retry 3 --retry-connrefused \
    --output "$download" "$url"; then
    actual=$(sha256_of "$download")
    if [[ $actual != "$expected" ]]; then
      rm -f "$download"
      fail "$archive from $url has sha256 $actual, but dist/checksums/$version.sha256 committed in the action says $expected: refusing to install it"
    fi
    unpack="$install_dir/unpack"
    rm -rf "$unpack" && mkdir -p "$unpack"
    if [[ $archive == *.zip ]]; then
      if command -v unzip >/dev/null 2>&1; then unzip -q "$download" -d "$unpack"; else 7z x -bd -o"$unpack" "$download" >/dev/null; fi
    else
      if command -v xz >/dev/null 2>&1; then
        xz -dc "$download" | tar -xf - -C "$unpack"
      else
        tar -xJf "$download" -C "$unpack" # bsdtar (macOS) reads xz itself
      fi
    fi
    found="$unpack/mcp-stdio-guard-$target/$exe"
    [[ -f $found ]] || fail "$archive has no mcp-stdio-guard-$target/$exe"
    mv -f "$found" "$binary"
    chmod +x "$binary"
    rm -rf "$unpack" "$download"
    finish release "$actual"
  fi
  why_not="download of $url failed"
fi

# ---------------------------------------------------------------------------- cargo install
if [[ ${INPUT_CARGO_INSTALL_FALLBACK:-true} != true ]]; then
  fail "$why_not, and cargo-install-fallback is false"
fi
command -v cargo >/dev/null 2>&1 || fail "$why_not, and cargo is not installed for the fallback (add a Rust toolchain step, or pin a released version)"
note "$why_not: building it with cargo install --locked (a few minutes)"
if [[ $version == "$own_version" ]]; then
  cargo install --locked --path "$action_path" --root "$install_dir" --force >&2 ||
    fail "cargo install --locked --path $action_path failed"
else
  cargo install --locked mcp-stdio-guard --version "=$version" --root "$install_dir" --force >&2 ||
    fail "cargo install --locked mcp-stdio-guard --version =$version failed"
fi
finish cargo
