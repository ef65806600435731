# Sourced by the scripts under scripts/, compat/ and .ci/: installs the
# Debian packages a step needs, but only those that are missing, so a
# developer's machine is left alone and a fresh CI machine gets set up.
# Works only as root on Debian/Ubuntu; elsewhere it says what to install.

deps_missing()
{
    local pkg missing=
    for pkg in "$@"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null |
            grep -q 'install ok installed' || missing="$missing $pkg"
    done
    echo "$missing"
}

# deps_install PKG...: returns 0 when every package is installed afterwards.
deps_install()
{
    local missing
    command -v dpkg-query >/dev/null 2>&1 || return 0
    missing=$(deps_missing "$@")
    [ -z "$missing" ] && return 0
    if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
        echo "missing Debian packages:$missing (install them: apt-get install$missing)" >&2
        return 1
    fi
    echo "installing:$missing" >&2
    # apt-get update once per process: the package lists of a fresh machine
    # are empty, and a stale list makes installs fail with 404s.
    if [ -z "${DEPS_UPDATED:-}" ]; then
        DEBIAN_FRONTEND=noninteractive apt-get update -q >&2 || return 1
        DEPS_UPDATED=1
        export DEPS_UPDATED
    fi
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing >&2
}
