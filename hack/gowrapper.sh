# hack/gowrapper.sh - sourced by the tool scripts (acme.sh, geo.sh): build a
# test tool whose main.go lives in this repository but which needs a library
# the plugin's module must not depend on. The main.go is copied into a module
# of its own under $CACHE/src/NAME, the library is added at its pinned
# version, and the binary goes to $BIN/NAME with a stamp of the version and
# the source, so it is built again only when either changes.
#
# The sourcing script defines CACHE, BIN, log and die, and has run setup_go.

# build_wrapper NAME MAIN_GO MODULE VERSION WHAT
build_wrapper() {
	local name=$1 main=$2 module=$3 version=$4 what=$5
	local src=$CACHE/src/$name stamp
	stamp="$module@$version $(sha256sum "$main" | cut -c1-16)"
	if [[ -x $BIN/$name && -f $BIN/.$name.version && "$(cat "$BIN/.$name.version")" == "$stamp" ]]; then
		return 0
	fi
	rm -rf "$src"
	mkdir -p "$src" "$BIN"
	cp "$main" "$src/"
	local start
	start=$(date +%s)
	log "building $what ($module $version, first time only)"
	(
		cd "$src"
		go mod init "k8sgw.local/$name" >build.log 2>&1
		go get "$module@$version" >>build.log 2>&1
		go mod tidy >>build.log 2>&1
		go build -trimpath -ldflags '-s -w' -o "$BIN/.$name.tmp" . >>build.log 2>&1
	) || { tail -n 30 "$src/build.log" >&2; die "building $what failed"; }
	mv -f "$BIN/.$name.tmp" "$BIN/$name"
	printf '%s' "$stamp" >"$BIN/.$name.version"
	log "built $name in $(($(date +%s) - start)) s"
}
