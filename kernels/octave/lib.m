% kbound octave pack: everything the cells do, as functions. Each cell is one line that evals this
% file (rendered with the cell's parameters), calls one function and clears them all, so only
% kbound_nonce stays in the user's workspace, and octave_kernel, which feeds a cell to octave-cli
% line by line through a pty, sends one line. The kernel process is octave's parent, getppid().
function p = kb_params()
  p = jsondecode(char(matlab.net.base64decode("{{KBOUND_PARAMS_B64}}")));
end
function kb_result(text)  % the marked result line, and a blank line: a pty kernel holds the last
  printf("%s %s\n\n", kb_params().result_marker, matlab.net.base64encode(uint8(text))); fflush(stdout);
end
function kb_identity()
  st = fileread(sprintf("/proc/%d/status", getppid()));
  f = @(k) str2num(regexp(st, [k ":\\s*([^\\n]*)"], "tokens", "once"){1});
  r.pid = getppid(); r.ppid = f("PPid"); r.nspid = num2cell(f("NSpid")); r.uid = f("Uid")(1); r.hostname = gethostname();
  kb_result(jsonencode(r));
end
function kb_set_var()
  assignin("base", "kbound_nonce", kb_params().value); kb_result("{\"ok\":true}");
end
function kb_get_var()  % rebound to a non-string: what disp shows of it
  v = "null";
  if evalin("base", "exist('kbound_nonce', 'var')") v = evalin("base", "kbound_nonce");
    if ischar(v) v = jsonencode(v); else v = jsonencode(strtrim(disp(v))); end; end
  kb_result(sprintf("{\"value\":%s,\"pid\":%d}", v, getppid()));
end
function kb_long()  % the count renamed into place, so the host never reads half a number
  p = kb_params(); printf("%s\n", p.marker); fflush(stdout); t = tic; n = 0;
  while toc(t) < p.seconds
    pause(0.05); n++;
    if isfield(p, "progress") && ischar(p.progress)
      fd = fopen([p.progress ".new"], "w"); fprintf(fd, "%d\n", n); fclose(fd); rename([p.progress ".new"], p.progress);
    end
  end
  printf("kbound: long cell ran to completion\n"); kb_result("{\"completed\":true}");
end
% kbound-probe in MODE, its output straight to the pty (Octave's popen reads only at the end), each
% line with a blank line after it; a program that fails fails the cell.
function kb_run_probe(mode)
  st = system(["exec 3>&1; rc=$( { { '" kb_params().program "' --kernel-pid " num2str(getppid()) " " mode ...
    " '{{KBOUND_PARAMS_B64}}' </dev/null; echo $? >&4; } | while IFS= read -r l; do printf '%s\\n\\n' \"$l\"; done >&3; } 4>&1 ); exit $rc"], false);
  if st != 0 error("kbound-probe %s exited with status %d", mode, st); end
end
