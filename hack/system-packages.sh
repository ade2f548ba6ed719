#!/usr/bin/env bash
# Installs the system tools the control plane and the harness need, from Debian, when missing:
# openssl (certificates), setpriv (children die with their parent) and mariadb-server (the mysql
# provider's tests). Go comes with the machine.
set -euo pipefail
missing=()
command -v openssl >/dev/null || missing+=(openssl)
command -v setpriv >/dev/null || missing+=(util-linux)
# iptables: the edge-daemon integration test cuts traffic between loopback addresses with it.
command -v iptables >/dev/null || missing+=(iptables)
# The mysql provider's tests run a real MariaDB server (test/harness/mariadb.ts).
[[ -x /usr/sbin/mariadbd ]] || missing+=(mariadb-server)
# The gateway benchmark (hack/bench/gateway-throughput.ts) compares against Debian's nginx, with wrk.
[[ -x /usr/sbin/nginx ]] || missing+=(nginx-light)
command -v wrk >/dev/null || missing+=(wrk)
# Basic auth tests check htpasswd files made by Apache's htpasswd (bcrypt, apr1, SHA).
command -v htpasswd >/dev/null || missing+=(apache2-utils)
# The HTTP/2 tests use nghttp as a real h2 client (gateway/proxy/h2/peers.test.ts).
command -v nghttp >/dev/null || missing+=(nghttp2-client)
if ((${#missing[@]} > 0)); then
  echo "[system-packages] installing ${missing[*]}" >&2
  if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >&2
fi
if ! command -v go >/dev/null; then
  echo "[system-packages] Go >= 1.25 is required to build kube-apiserver and etcd (https://go.dev/doc/install)" >&2
  exit 1
fi
