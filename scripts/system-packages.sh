#!/usr/bin/env bash
# Install the Debian packages the course needs, only those that are missing.
#   scripts/system-packages.sh grade   -> bubblewrap (the grading sandbox)
#   scripts/system-packages.sh test    -> bubblewrap, chromium (browser tests), postgresql (gradebook tests),
#                                         nodejs and npm, then configurable-http-proxy (JupyterHub's proxy, from npm,
#                                         pinned) into .venv/node/ (the JupyterHub test, docs/jupyterhub.md)
set -euo pipefail
CHP_VERSION=5.3.0
here=$(cd "$(dirname "$0")/.." && pwd)
need=()
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
if [ "${1:-grade}" = test ]; then
  [ -x /usr/bin/chromium ] || need+=(chromium)
  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
  command -v node >/dev/null 2>&1 || need+=(nodejs)
  command -v npm >/dev/null 2>&1 || need+=(npm)
fi
proxy() {
  if [ "${1:-grade}" = test ] && [ ! -x "$here/.venv/node/node_modules/.bin/configurable-http-proxy" ]; then
    echo "Installing configurable-http-proxy $CHP_VERSION (npm) into .venv/node"
    npm install --silent --no-audit --no-fund --prefix "$here/.venv/node" "configurable-http-proxy@$CHP_VERSION" >/dev/null
  fi
}
if [ ${#need[@]} -eq 0 ]; then proxy "${1:-grade}"; exit 0; fi
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
proxy "${1:-grade}"
