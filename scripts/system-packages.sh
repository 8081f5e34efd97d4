#!/usr/bin/env bash
# Install the Debian packages the course needs, only those that are missing.
#   scripts/system-packages.sh grade   -> bubblewrap (the grading sandbox)
#   scripts/system-packages.sh test    -> bubblewrap, chromium (browser tests), postgresql (gradebook tests)
set -euo pipefail
need=()
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
if [ "${1:-grade}" = test ]; then
  [ -x /usr/bin/chromium ] || need+=(chromium)
  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
fi
[ ${#need[@]} -eq 0 ] && exit 0
echo "Installing Debian packages: ${need[*]}"
if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1; then
  sudo=(sudo)
else
  echo "Missing Debian packages: ${need[*]}. Install them as root: apt-get install ${need[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
