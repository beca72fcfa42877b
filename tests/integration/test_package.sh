#!/usr/bin/env bash
# The Debian package: `cpack -G DEB` from a fresh build configured as README.md says, its control
# data (Depends, Recommends, the postinst) and contents checked with dpkg-deb, then installed with
# dpkg into a scratch root (never the real system) and the packaged kbound run from there.
. "$(dirname "$0")/lib.sh"
require cmake cpack dpkg dpkg-deb dpkg-query ldd pkg-config

build="$scratch/build"
out="$scratch/out"
root="$scratch/root"

# 1. Build the package from the source tree, into the scratch folder only.
cmake -S "$KBOUND_SOURCE_DIR" -B "$build" -DCMAKE_INSTALL_PREFIX=/usr -DBUILD_TESTING=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$scratch/configure.log" 2>&1 || { tail -20 "$scratch/configure.log"; exit 1; }
cmake --build "$build" -j"$(nproc)" >"$scratch/build.log" 2>&1 || { tail -40 "$scratch/build.log"; exit 1; }
(cd "$build" && cpack -G DEB -B "$out") >"$scratch/cpack.log" 2>&1 || { tail -40 "$scratch/cpack.log"; exit 1; }
debs=("$out"/*.deb)
ok "cpack -G DEB built exactly one .deb (${debs[*]##*/})" [ "${#debs[@]}" -eq 1 -a -s "${debs[0]}" ]
deb=${debs[0]}

# 2. Control data.
field() { dpkg-deb -f "$deb" "$1"; }
version=$("$KBOUND" --version | awk '{print $2}')
arch=$(dpkg --print-architecture)
ok "Package is kbound" [ "$(field Package)" = kbound ]
ok "Version is kbound's own ($version)" [ "$(field Version)" = "$version" ]
ok "Architecture is this machine's ($arch)" [ "$(field Architecture)" = "$arch" ]
ok "the file is named as Debian names it" [ "${deb##*/}" = "kbound_${version}_${arch}.deb" ]
# A relation field as one package name per line (versions and alternatives stripped).
names() { field "$1" | tr ',|' '\n\n' | sed 's/(.*//; s/^ *//; s/ *$//' | sed '/^$/d'; }
names Depends >"$scratch/depends"
names Recommends >"$scratch/recommends"
for p in libzmq5 libczmq4 libssl3 libjson-c5 libseccomp2 zlib1g bubblewrap; do
  ok "Depends on $p" grep -qx "$p" "$scratch/depends"
done
for p in python3-ipykernel r-cran-irkernel; do
  ok "Recommends $p (a kernel the language packs drive)" grep -qx "$p" "$scratch/recommends"
  ok "  and does not require it" bash -c "! grep -qx '$p' '$scratch/depends'"
done
# Every name is a real Debian package: the ones kbound links are installed here under those
# names (scripts/setup installed them), so a typo or a wrong soname version fails here.
while read -r p; do
  ok "dependency '$p' is a Debian package installed on this machine" \
    bash -c "dpkg-query -W -f='\${Status}' '$p' 2>/dev/null | grep -q 'install ok installed'"
done <"$scratch/depends"

# The postinst creates the sandbox user kernels run as when kbound is root (as scripts/setup).
dpkg-deb -e "$deb" "$scratch/control"
ok "the control archive has an executable postinst" test -x "$scratch/control/postinst"
ok "  which is valid sh" sh -n "$scratch/control/postinst"
ok "  and creates the system user kbound-sandbox when configured" \
  grep -qE '^ *useradd --system .*kbound-sandbox$' "$scratch/control/postinst"

# 3. Contents: what the install rules install, all under /usr.
dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|; s|/$||' | sed '/^$/d' | sort >"$scratch/contents"
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
ok "everything is under /usr" bash -c "! grep -v '^/usr' '$scratch/contents'"
for f in /usr/bin/kbound /usr/lib/$multiarch/libkbound.so "/usr/lib/$multiarch/libkbound.so.0" \
  "/usr/lib/$multiarch/libkbound.so.$version" "/usr/lib/$multiarch/pkgconfig/kbound.pc" \
  /usr/libexec/kbound/kbound-syscall-probe /usr/share/man/man1/kbound.1 /usr/share/kbound/kbound-report.schema.json; do
  ok "contains $f" grep -qx "$f" "$scratch/contents"
done
for h in "$KBOUND_SOURCE_DIR"/include/kbound/*.h; do
  ok "contains the header ${h##*/}" grep -qx "/usr/include/kbound/${h##*/}" "$scratch/contents"
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
  ok "dpkg --root unpacks the package into the scratch root" \
    dpkg --root="$root" --log="$scratch/dpkg.log" --force-depends --unpack "$deb"
  ok "dpkg --root knows it as unpacked" bash -c "dpkg --root='$root' -s kbound | grep -qx 'Status: install ok unpacked'"
  ok "dpkg --root lists its files" bash -c "dpkg --root='$root' -L kbound | grep -qx /usr/bin/kbound"
else
  echo "not root: extracting with dpkg-deb -x (dpkg --root needs root to set owners)"
  ok "dpkg-deb -x extracts the package into the scratch root" dpkg-deb -x "$deb" "$root"
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
