#!/usr/bin/env bash
# The Debian packages (kbound, libkbound0, libkbound-dev): `cpack -G DEB` from a fresh build
# configured as README.md says, lintian on them, their control
# data (Depends from dpkg-shlibdeps, Recommends, Suggests, shlibs, the trigger and postinst) and
# contents checked with dpkg-deb, then installed with
# dpkg into a scratch root (never the real system) and the packaged kbound run from there.
. "$(dirname "$0")/lib.sh"
require cmake cpack dpkg dpkg-deb dpkg-query ldd pkg-config lintian

build="$scratch/build"
out="$scratch/out"
root="$scratch/root"

# 1. Build the packages from the source tree, into the scratch folder only.
cmake -S "$KBOUND_SOURCE_DIR" -B "$build" -DCMAKE_INSTALL_PREFIX=/usr -DBUILD_TESTING=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$scratch/configure.log" 2>&1 || { tail -20 "$scratch/configure.log"; exit 1; }
cmake --build "$build" -j"$(nproc)" >"$scratch/build.log" 2>&1 || { tail -40 "$scratch/build.log"; exit 1; }
(cd "$build" && cpack -G DEB -B "$out") >"$scratch/cpack.log" 2>&1 || { tail -40 "$scratch/cpack.log"; exit 1; }
version=$("$KBOUND" --version | awk '{print $2}')
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
debs=("$out"/*.deb)
ok "cpack -G DEB built three packages (${debs[*]##*/})" [ "${#debs[@]}" -eq 3 ]
for pkg in kbound libkbound0 libkbound-dev; do
  ok "  $pkg, named as Debian names it" test -s "$out/${pkg}_${version}_${arch}.deb"
done
deb=$out/kbound_${version}_${arch}.deb
lib_deb=$out/libkbound0_${version}_${arch}.deb
dev_deb=$out/libkbound-dev_${version}_${arch}.deb

# 2. Control data.
field() { dpkg-deb -f "$deb" "$1"; }
ok "Package is kbound" [ "$(field Package)" = kbound ]
ok "Version is kbound's own ($version)" [ "$(field Version)" = "$version" ]
ok "Architecture is this machine's ($arch)" [ "$(field Architecture)" = "$arch" ]
# A relation field of a package as one package name per line (versions and alternatives stripped).
names_of() { dpkg-deb -f "$1" "$2" | tr ',|' '\n\n' | sed 's/(.*//; s/^ *//; s/ *$//' | sed '/^$/d'; }
names_of "$deb" Depends >"$scratch/depends"
names_of "$deb" Recommends >"$scratch/recommends"
names_of "$deb" Suggests >"$scratch/suggests"
names_of "$lib_deb" Depends >"$scratch/lib-depends"
names_of "$dev_deb" Depends >"$scratch/dev-depends"
ok "kbound depends on exactly this version of libkbound0" \
  bash -c "dpkg-deb -f '$deb' Depends | grep -qF 'libkbound0 (= $version)'"
for p in bubblewrap passwd; do
  ok "kbound depends on $p (it runs it)" grep -qx "$p" "$scratch/depends"
done
# What the library links, found by dpkg-shlibdeps (not written by hand).
for p in libc6 libzmq5 libczmq4 libssl3 libjson-c5 libseccomp2 zlib1g; do
  ok "libkbound0 depends on $p (dpkg-shlibdeps)" grep -qx "$p" "$scratch/lib-depends"
done
ok "  ... with the versions dpkg-shlibdeps found" bash -c "dpkg-deb -f '$lib_deb' Depends | grep -qE 'libzmq5 \(>= '"
ok "libkbound-dev depends on exactly this libkbound0, and json-c's headers (kbound's use them)" \
  bash -c "dpkg-deb -f '$dev_deb' Depends | grep -qF 'libkbound0 (= $version)' && grep -qx libjson-c-dev '$scratch/dev-depends'"
for p in python3-ipykernel r-cran-irkernel; do
  ok "Recommends $p (a kernel the language packs drive)" grep -qx "$p" "$scratch/recommends"
  ok "  and does not require it" bash -c "! grep -qx '$p' '$scratch/depends'"
done
for p in skopeo umoci; do
  ok "Suggests $p (--image)" grep -qx "$p" "$scratch/suggests"
done
# Every name is a real Debian package: the ones kbound links are installed here under those
# names (scripts/setup installed them), so a typo or a wrong soname version fails here.
while read -r p; do
  [ "$p" = libkbound0 ] && continue
  ok "dependency '$p' is a Debian package installed on this machine" \
    bash -c "dpkg-query -W -f='\${Status}' '$p' 2>/dev/null | grep -q 'install ok installed'"
done < <(cat "$scratch/depends" "$scratch/lib-depends" "$scratch/dev-depends" | sort -u)

# The library's shlibs and ldconfig trigger; the tool's postinst creates the sandbox user kernels
# run as when kbound is root (as scripts/setup).
dpkg-deb -e "$lib_deb" "$scratch/lib-control"
ok "libkbound0 has a shlibs file for its soname" grep -qx "libkbound 0 libkbound0 (>= $version)" "$scratch/lib-control/shlibs"
ok "  and an ldconfig trigger" grep -qx "activate-noawait ldconfig" "$scratch/lib-control/triggers"
dpkg-deb -e "$deb" "$scratch/control"
ok "the control archive has an executable postinst" test -x "$scratch/control/postinst"
ok "  which is valid sh" sh -n "$scratch/control/postinst"
ok "  and creates the system user kbound-sandbox when configured" \
  grep -qE '^ *useradd --system .*kbound-sandbox$' "$scratch/control/postinst"

# lintian, Debian's own package checker: no error in any of the three (warnings are printed).
lintian_run() {
  local rc=0
  lintian --allow-root --fail-on error "$@" >"$scratch/lintian.out" 2>&1 || rc=$?
  sed 's/^/    | /' "$scratch/lintian.out" >&2
  return "$rc"
}
ok "lintian finds no error in the three packages" lintian_run "$deb" "$lib_deb" "$dev_deb"

# 3. Contents: what the install rules install, all under /usr, each file in its package.
contents_of() { dpkg-deb -c "$1" | awk '{print $6}' | sed 's|^\./|/|; s|/$||' | sed '/^$/d' | sort; }
contents_of "$deb" >"$scratch/contents"
contents_of "$lib_deb" >"$scratch/lib-contents"
contents_of "$dev_deb" >"$scratch/dev-contents"
ok "everything is under /usr" bash -c "! cat '$scratch/contents' '$scratch/lib-contents' '$scratch/dev-contents' | grep -v '^/usr'"
for f in /usr/bin/kbound /usr/libexec/kbound/kbound-syscall-probe /usr/libexec/kbound/kbound-probe \
  /usr/share/man/man1/kbound.1.gz \
  /usr/share/kbound/kbound-report.schema.json /usr/share/kbound/kbound-evidence.schema.json \
  /usr/share/doc/kbound/copyright /usr/share/doc/kbound/changelog.gz; do
  ok "kbound contains $f" grep -qx "$f" "$scratch/contents"
done
for f in "/usr/lib/$multiarch/libkbound.so.0" "/usr/lib/$multiarch/libkbound.so.$version" \
  /usr/share/doc/libkbound0/copyright; do
  ok "libkbound0 contains $f" grep -qx "$f" "$scratch/lib-contents"
done
for f in "/usr/lib/$multiarch/libkbound.so" "/usr/lib/$multiarch/pkgconfig/kbound.pc" /usr/share/doc/libkbound-dev/copyright; do
  ok "libkbound-dev contains $f" grep -qx "$f" "$scratch/dev-contents"
done
ok "the library is in libkbound0 only" bash -c "! grep -q 'libkbound.so' '$scratch/contents'"
for h in "$KBOUND_SOURCE_DIR"/include/kbound/*.h; do
  ok "libkbound-dev contains the header ${h##*/}" grep -qx "/usr/include/kbound/${h##*/}" "$scratch/dev-contents"
done
(cd "$KBOUND_SOURCE_DIR/kernels" && find . -type f | sed 's|^\./||') >"$scratch/packs"
ok "the source tree has language packs to compare with" [ -s "$scratch/packs" ]
while read -r f; do
  ok "contains the language pack file $f" grep -qx "/usr/share/kbound/kernels/$f" "$scratch/contents"
done <"$scratch/packs"

# 4. Install into a scratch root. As root: with dpkg, its own database and log, unpacked only (the
# postinst, which would add a user, runs on configure, which is never done here; the dependencies
# live in the real system's database, not the scratch one). dpkg needs root to give files their
# owners, so an ordinary user extracts the files with dpkg-deb instead.
if [ "$(id -u)" -eq 0 ]; then
  mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" "$root/var/lib/dpkg/triggers"
  : >"$root/var/lib/dpkg/status"
  ok "dpkg --root unpacks the three packages into the scratch root" \
    dpkg --root="$root" --log="$scratch/dpkg.log" --force-depends --unpack "$deb" "$lib_deb" "$dev_deb"
  for pkg in kbound libkbound0 libkbound-dev; do
    ok "dpkg --root knows $pkg as unpacked" bash -c "dpkg --root='$root' -s $pkg | grep -qx 'Status: install ok unpacked'"
  done
  ok "dpkg --root lists their files" bash -c "dpkg --root='$root' -L kbound | grep -qx /usr/bin/kbound"
else
  echo "not root: extracting with dpkg-deb -x (dpkg --root needs root to set owners)"
  ok "dpkg-deb -x extracts the three packages into the scratch root" \
    bash -c "dpkg-deb -x '$deb' '$root' && dpkg-deb -x '$lib_deb' '$root' && dpkg-deb -x '$dev_deb' '$root'"
fi
# kbound.pc names its folders relative to itself, so it is right wherever the tree lands.
pc_libdir=$(PKG_CONFIG_PATH="$root/usr/lib/$multiarch/pkgconfig" pkg-config --variable=libdir kbound)
pc_includedir=$(PKG_CONFIG_PATH="$root/usr/lib/$multiarch/pkgconfig" pkg-config --variable=includedir kbound)
ok "the packaged kbound.pc's libdir is where the library is ($pc_libdir)" \
  [ "$(realpath -m "$pc_libdir")" = "$root/usr/lib/$multiarch" ]
ok "  and its includedir where the headers are" [ "$(realpath -m "$pc_includedir")" = "$root/usr/include" ]

# 5. The packaged kbound, run from the scratch root.
pkg_kbound="$root/usr/bin/kbound"
chmod 755 "$root" # as root, the sandbox user must reach the packaged probe program
ok "the packaged kbound loads the packaged libkbound" \
  bash -c "ldd '$pkg_kbound' | grep -q 'libkbound.so.0 => $root/usr/'"
ok "packaged kbound --version" bash -c "[ \"\$('$pkg_kbound' --version)\" = 'kbound $version' ]"
set +e
"$pkg_kbound" kernelspecs >"$scratch/kernelspecs.txt" 2>"$scratch/kernelspecs.err"
rc=$?
set -e
ok "packaged kbound kernelspecs exits 0 (rc=$rc)" [ "$rc" -eq 0 ]
ok "  and lists python3" grep -qE '^python3 +python ' "$scratch/kernelspecs.txt"
ok "  and ir" grep -qE '^ir +R ' "$scratch/kernelspecs.txt"
# The whole check from the package: its probe cells (share/kbound/kernels) and its probe program
# (libexec/kbound: no other copy is beside the packaged binary) found relative to the binary.
set +e
"$pkg_kbound" check --kernel python3 --team pkg --quiet --json "$scratch/check.json" >"$scratch/check.out" 2>"$scratch/check.err"
rc=$?
set -e
ok "packaged kbound check --kernel python3 passes (rc=$rc)" [ "$rc" -eq 0 ]
ok "  its attack surface was tried by the packaged probe program" \
  [ "$(check_status "$scratch/check.json" python3 sandbox.attack_surface)" = pass ]
# A failure says which checks, and how the run went.
[ "$rc" -eq 0 ] || { grep -v '^PASS ' "$scratch/check.out" | head -30; tail -20 "$scratch/check.err"; }
assert_no_leftovers "packaged check"

finish
