# Sourced by the scripts: the running Debian release and its row of releases.tsv.
#   uk_release            bookworm, trixie or sid (UNWINDKIT_RELEASE overrides what is read)
#   uk_python uk_lldb uk_lldb_also(array) uk_fuzz_clang uk_llvm uk_gdb uk_binutils
#   uk_releases(array)    every release the table has
uk_table="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/releases.tsv"

uk_detect_release() {
  if grep -q '/sid$' /etc/debian_version 2>/dev/null; then echo sid; return; fi
  (. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-unknown}")
}

mapfile -t uk_releases < <(awk -F'\t' '!/^#/ && $1 != "release" { print $1 }' "$uk_table")
uk_release="${UNWINDKIT_RELEASE:-$(uk_detect_release)}"
uk_row="$(awk -F'\t' -v r="$uk_release" '$1 == r' "$uk_table")"
if [ -z "$uk_row" ]; then
  echo "unwindkit: Debian release '$uk_release' is not in releases.tsv (${uk_releases[*]})" >&2
  exit 2
fi
IFS=$'\t' read -r _ uk_python uk_lldb uk_lldb_also_csv uk_fuzz_clang uk_llvm uk_gdb uk_binutils \
  <<<"$uk_row"
uk_lldb_also=()
if [ "$uk_lldb_also_csv" != - ]; then IFS=, read -r -a uk_lldb_also <<<"$uk_lldb_also_csv"; fi
