# Sourced by the scripts: a Debian root per release (debootstrap --variant=minbase), kept under
# $UNWINDKIT_ROOTS (default /var/cache/unwindkit/roots, outside the tree) and reused, and a way
# to run a command in one with this tree and ../shared at the same paths as here.
uk_roots="${UNWINDKIT_ROOTS:-/var/cache/unwindkit/roots}"
uk_mirror="${UNWINDKIT_MIRROR:-http://deb.debian.org/debian}"

# uk_root_make RELEASE: makes the root unless it is there (a half-made one is made anew).
uk_root_make() {
  local release="$1" dir="$uk_roots/$1"
  [ -f "$dir/.unwindkit-root" ] && return 0
  command -v debootstrap >/dev/null || { apt-get update -qq; apt-get install -y -qq debootstrap; }
  mkdir -p "$uk_roots"
  rm -rf "$dir.tmp"
  echo "== making the $release root in $dir (debootstrap --variant=minbase)"
  debootstrap --variant=minbase "$release" "$dir.tmp" "$uk_mirror" >"$uk_roots/$release.log" 2>&1 ||
    { tail -20 "$uk_roots/$release.log" >&2; return 1; }
  # sid's Release file may be past its Valid-Until; recommends stay out, as in scripts/deps.
  cat >"$dir.tmp/etc/apt/apt.conf.d/99unwindkit" <<'APT'
Acquire::Check-Valid-Until "false";
APT::Install-Recommends "false";
APT
  touch "$dir.tmp/.unwindkit-root"
  mv "$dir.tmp" "$dir"
}

# uk_root_run RELEASE COMMAND...: runs COMMAND in the root as root, in a mount namespace of its
# own (so /proc, /dev and the bind mounts vanish with it, whatever way it ends), with a clean
# environment but CI and the UNWINDKIT_* variables.
uk_root_run() {
  local release="$1" dir="$uk_roots/$1" tree shared
  shift
  tree="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
  shared="$(cd "$tree/../shared" 2>/dev/null && pwd || true)"
  cp /etc/resolv.conf "$dir/etc/resolv.conf"
  local envs=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
              LANG=C.UTF-8 TERM=dumb)
  [ -n "${CI:-}" ] && envs+=("CI=$CI")
  while IFS= read -r v; do envs+=("$v"); done < <(env | grep '^UNWINDKIT_' | grep -v '^UNWINDKIT_ROOTS=')
  unshare --mount --propagation private -- bash -euc '
    dir="$1"; tree="$2"; shared="$3"; shift 3
    mount -t proc proc "$dir/proc"
    mount --rbind /dev "$dir/dev"
    mount -t tmpfs tmpfs "$dir/dev/shm" 2>/dev/null || true
    mkdir -p "$dir$tree"; mount --bind "$tree" "$dir$tree"
    # build/ is the release'"'"'s own, kept in its root: the host'"'"'s builds stay untouched.
    mkdir -p "$dir/var/cache/unwindkit-build$tree" "$dir$tree/build"
    mount --bind "$dir/var/cache/unwindkit-build$tree" "$dir$tree/build"
    if [ -n "$shared" ]; then mkdir -p "$dir$shared"; mount --bind "$shared" "$dir$shared"; fi
    exec chroot "$dir" "$@"' _ "$dir" "$tree" "$shared" env -i "${envs[@]}" "$@"
}
