#!/bin/sh
# What the codemux image does, in one place. The Dockerfile runs `install` when it builds the image and
# `start` as its ENTRYPOINT; the deploy suite (scripts/test/deploy.test.mjs) runs the same two steps with
# IMAGE_ROOT, a folder standing for the image's /, since no container runtime runs there.
#   codemux-image.sh install TARBALL OWNER   the packed CLI, as `npm install -g codemux` installs it, and its folders, owned by OWNER
#   codemux-image.sh start [ARGS...]         codemux ARGS in the data folder, its home in the home folder
set -eu
root="${IMAGE_ROOT:-}"
# The built-in filesystem server's root (mount a volume here) and codemux's home (mount a codemux.json here).
data="$root/data"
home="$root/home/node/.codemux"

case "${1:-}" in
  install)
    [ "$#" -eq 3 ] || { echo "usage: codemux-image.sh install TARBALL OWNER" >&2; exit 2; }
    # The tarball's own dependencies come from the npm registry, as they do for `npm install -g codemux`.
    npm install --global --prefix "$root/usr/local" --omit=dev "$2"
    mkdir -p "$data" "$home"
    chown -R "$3" "$data" "$home"
    ;;
  start)
    shift
    cd "$data"
    CODEMUX_HOME="${CODEMUX_HOME:-$home}"
    export CODEMUX_HOME
    exec "$root/usr/local/bin/codemux" "$@"
    ;;
  *)
    echo "usage: codemux-image.sh install TARBALL OWNER | start [codemux arguments...]" >&2
    exit 2
    ;;
esac
