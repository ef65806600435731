# compat/lib/client.sh: sourced by every compat/clients/*.sh (and, through
# compat/lib/java-tool.sh, by the compat/*-java.sh scripts). Each client
# script is called by compat/suite.sh as
#   CLIENT.sh na                    prints "SCENARIO reason" for each scenario
#                                   the client has no API for
#   CLIENT.sh install               fetches and builds (cached under .cache/),
#                                   prints "VERSION: ..."; exit 77 to skip
#   CLIENT.sh run SCENARIO [PHASE]  exit 0 pass, anything else fail
# with COMPAT_BS (the broker), COMPAT_ID (one token per suite run: topic and
# group names of both restart phases match), COMPAT_WORK (scratch) and ROOT.
set -u
: "${ROOT:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
CACHE=$ROOT/.cache
# shellcheck source=../../scripts/lib/deps.sh
. "$ROOT/scripts/lib/deps.sh"

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }

# pip_site REQUIREMENTS: installs the pinned wheels into a directory of
# their own (one per requirements file and Python version) and prints it.
# Into a fresh directory renamed at the end: a half-done install is never
# taken for a complete one, and concurrent runs do not mix.
pip_site()
{
    local req=$1 pyver site
    command -v python3 >/dev/null 2>&1 || skip "no python3 on PATH"
    pyver=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])') || fail "python3 does not run"
    site=$CACHE/python/py$pyver-$(cksum < "$req" | cut -d ' ' -f 1)
    if [ ! -f "$site/.complete" ]; then
        if ! python3 -m pip --version >/dev/null 2>&1; then
            deps_install python3-pip >&2 && python3 -m pip --version >/dev/null 2>&1 ||
                skip "python3 has no pip and it cannot be installed"
        fi
        mkdir -p "$CACHE/python" && rm -rf "$site.$$" || fail "cannot create $CACHE/python"
        python3 -m pip install -q --disable-pip-version-check --no-warn-script-location \
            --only-binary=:all: --target "$site.$$" -r "$req" > "$site.log" 2>&1 ||
            { tail -n 30 "$site.log" >&2; rm -rf "$site.$$"; fail "pip install -r $req failed"; }
        touch "$site.$$/.complete"
        if ! mv -T "$site.$$" "$site" 2>/dev/null; then
            rm -rf "$site.$$"
            [ -f "$site/.complete" ] || fail "cannot move the packages to $site"
        fi
    fi
    echo "$site"
}

# npm_modules DIR: npm ci of DIR's package.json and package-lock.json into
# a directory of their own (one per lock file); prints its node_modules.
# No install scripts: every package pinned here is plain JavaScript (or wasm).
npm_modules()
{
    local src=$1 dir
    command -v node >/dev/null 2>&1 || skip "no node on PATH"
    dir=$CACHE/node/$(cat "$src/package.json" "$src/package-lock.json" | cksum | cut -d ' ' -f 1)
    if [ ! -f "$dir/.complete" ]; then
        command -v npm >/dev/null 2>&1 || skip "no npm on PATH"
        mkdir -p "$dir.$$" || fail "cannot create $dir.$$"
        cp "$src/package.json" "$src/package-lock.json" "$dir.$$/" || fail "cannot copy the package files"
        (cd "$dir.$$" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error \
            --cache "$CACHE/node/npm-cache") > "$dir.log" 2>&1 ||
            { tail -n 30 "$dir.log" >&2; rm -rf "$dir.$$"; fail "npm ci in $dir.$$ failed"; }
        touch "$dir.$$/.complete"
        if ! mv -T "$dir.$$" "$dir" 2>/dev/null; then
            rm -rf "$dir.$$"
            [ -f "$dir/.complete" ] || fail "cannot move the packages to $dir"
        fi
    fi
    echo "$dir/node_modules"
}

# go_bin SRC NAME: builds the Go program of SRC (modules pinned by its
# go.mod and go.sum) into .cache/go/bin/NAME, again only when a source is
# newer; prints the program's path.
go_bin()
{
    local src=$1 bin=$CACHE/go/bin/$2
    command -v go >/dev/null 2>&1 || skip "no Go toolchain (go) on PATH"
    # -modcacherw: a module cache that rm -rf can remove.
    export GOMODCACHE=$CACHE/go/mod GOCACHE=$CACHE/go/build GOFLAGS=-modcacherw
    if [ ! -x "$bin" ] || [ -n "$(find "$src" -newer "$bin" -type f | head -n 1)" ]; then
        mkdir -p "$CACHE/go/bin" || fail "cannot create $CACHE/go/bin"
        (cd "$src" && go build -mod=readonly -o "$bin.$$" .) > "$CACHE/go/$2.log" 2>&1 ||
            { tail -n 30 "$CACHE/go/$2.log" >&2; rm -f "$bin.$$"; fail "go build of $src failed"; }
        mv -f "$bin.$$" "$bin"
    fi
    echo "$bin"
}

# java_deps: the jars compat/java/pom.xml adds to Kafka's own (Kafka Streams
# and RocksDB; the rest of its dependencies are among Kafka's jars, in the
# same versions), fetched once from Maven Central into a directory of their
# own (one per pom), renamed into place when complete; prints the directory.
java_deps()
{
    local pom=$ROOT/compat/java/pom.xml dir
    dir=$CACHE/java-deps/$(cksum < "$pom" | cut -d ' ' -f 1)
    if [ ! -f "$dir/.complete" ]; then
        mkdir -p "$CACHE/java-deps" && rm -rf "$dir.$$" || fail "cannot create $CACHE/java-deps"
        mvn -B -q -Dstyle.color=never -f "$pom" dependency:copy-dependencies -DincludeScope=runtime \
            -DincludeArtifactIds=kafka-streams,rocksdbjni -DoutputDirectory="$dir.$$" > "$dir.log" 2>&1 ||
            { tail -n 30 "$dir.log" >&2; rm -rf "$dir.$$"; fail "mvn could not fetch compat/java's dependencies"; }
        touch "$dir.$$/.complete"
        if ! mv -T "$dir.$$" "$dir" 2>/dev/null; then
            rm -rf "$dir.$$"
            [ -f "$dir/.complete" ] || fail "cannot move the jars to $dir"
        fi
    fi
    echo "$dir"
}

# java_cp: the classpath of Kafka's own jars (kafka-clients and kafka-tools
# 4.4.0 from Maven Central, fetched once by scripts/kafka-ref.sh), of
# compat/java's own dependencies (java_deps) and of the compiled compat/java
# driver.
java_cp()
{
    local libs deps out=$CACHE/java-compat src=$ROOT/compat/java/src/main/java/strand/compat
    if ! command -v javac >/dev/null 2>&1 || ! command -v mvn >/dev/null 2>&1; then
        deps_install maven default-jdk-headless >&2 || skip "Java and Maven are not installed and cannot be"
    fi
    libs=$("$ROOT/scripts/kafka-ref.sh" classpath) || fail "cannot fetch Kafka's jars"
    deps=$(java_deps) || exit 1
    libs="$libs:$deps/*"
    if [ ! -f "$out/.complete" ] || [ -n "$(find "$src" -newer "$out/.complete" -type f | head -n 1)" ] ||
        [ "$(cat "$out/.classpath" 2>/dev/null)" != "$libs" ]; then
        rm -rf "$out.$$" && mkdir -p "$out.$$" || fail "cannot create $out.$$"
        javac -nowarn -d "$out.$$" -cp "$libs" "$src"/*.java > "$out.$$.log" 2>&1 ||
            { cat "$out.$$.log" >&2; rm -rf "$out.$$"; fail "javac of compat/java failed"; }
        echo "$libs" > "$out.$$/.classpath"
        rm -rf "$out" && mv -T "$out.$$" "$out" && touch "$out/.complete"
    fi
    echo "$out:$libs"
}
