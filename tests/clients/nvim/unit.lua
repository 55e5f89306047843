-- Unit tests of the plugin's pure parts (event formatting, run state) in headless Neovim.
-- Usage: nvim --clean --headless -l unit.lua PLUGIN_DIR ; prints "N passed, M failed" and exits non-zero on failure.
vim.opt.rtp:prepend(arg[1])
local format = require("lsp_agent.format")
local runs = require("lsp_agent.runs")

local tests, passed, failed = {}, 0, 0
local function test(name, fn)
  tests[#tests + 1] = { name = name, fn = fn }
end
local function eq(actual, expected)
  if not vim.deep_equal(actual, expected) then
    error(("expected %s, got %s"):format(vim.inspect(expected), vim.inspect(actual)), 2)
  end
end

test(":AgentAsk --model=NAME picks the model and completes the server's models", function()
  local options = require("lsp_agent.ask_options")
  eq({ options.parse("--model=openai/b fix the bug") }, { "fix the bug", "openai/b" })
  eq({ options.parse("--model openai/b fix it") }, { "fix it", "openai/b" })
  eq({ options.parse("fix --model=x later") }, { "fix --model=x later", nil })
  local models = function() return { "openai/a", "openai/b", "anthropic/c" } end
  eq(options.complete("", "AgentAsk ", models), { "--model=openai/a", "--model=openai/b", "--model=anthropic/c" })
  eq(options.complete("--model=o", "AgentAsk --model=o", models), { "--model=openai/a", "--model=openai/b" })
  eq(options.complete("--m", "1,2AgentAsk --m", models), { "--model=openai/a", "--model=openai/b", "--model=anthropic/c" })
  eq(options.complete("fi", "AgentAsk --model=openai/a fi", models), {})
  eq(options.complete("fix", "AgentAsk fix", models), {})
end)

test(":AgentAsk --read=NAME opens other workspace folders for reading and completes their names", function()
  local options = require("lsp_agent.ask_options")
  eq({ options.parse("--read=api,web --model=openai/b compare them") }, { "compare them", "openai/b", { "api", "web" } })
  eq({ options.parse("--read api --read=lib fix it") }, { "fix it", nil, { "api", "lib" } })
  eq({ options.parse("read --read=api later") }, { "read --read=api later", nil, nil })
  local models = function() return { "openai/a" } end
  local folders = function() return { "app", "api" } end
  eq(options.complete("--r", "AgentAsk --r", models, folders), { "--read=app", "--read=api" })
  eq(options.complete("--read=a", "AgentAsk --model=openai/a --read=a", models, folders), { "--read=app", "--read=api" })
  eq(options.complete("", "AgentAsk --read=api ", models, folders), { "--model=openai/a", "--read=app", "--read=api" })
  eq(options.complete("--r", "AgentAsk fix --r", models, folders), {})
  eq(options.folder_names({ workspace_folders = { { uri = "file:///w/app", name = "app" }, { uri = "file:///w/lib" } } }),
    { "app", "lib" })
end)

test("an ask without a file picks the folder in a multi-root workspace, else goes to the only one", function()
  local options = require("lsp_agent.ask_options")
  local got = "unset"
  options.folder({ workspace_folders = { { uri = "file:///w/app", name = "app" } } }, false, function(f) got = f end)
  eq(got, nil)
  local select = vim.ui.select
  vim.ui.select = function(items, opts, on_choice)
    eq(opts.format_item(items[2]), "lib")
    on_choice(items[2])
  end
  local two = { workspace_folders = { { uri = "file:///w/app", name = "app" }, { uri = "file:///w/lib", name = "lib" } } }
  options.folder(two, false, function(f) got = f end)
  eq(got, "file:///w/lib")
  options.folder(two, true, function(f) got = f end)
  eq(got, nil)
  vim.ui.select = select
end)

test("the progress echo says lsp-agent and indexing once", function()
  local progress = require("lsp_agent.progress")
  eq(progress.text(1, { kind = "begin", title = "lsp-agent: indexing", message = "indexing the workspace", percentage = 0 }),
    "lsp-agent: indexing: the workspace 0%")
  eq(progress.text(1, { kind = "report", message = "proj: 3/40 app.py", percentage = 7 }),
    "lsp-agent: indexing: proj: 3/40 app.py 7%")
  eq(progress.text(1, { kind = "end", message = "indexed 40 files" }), "lsp-agent: indexing: indexed 40 files")
  eq(progress.text("r", { kind = "begin", title = "lsp-agent: fix the bug", message = "starting" }),
    "lsp-agent: fix the bug: starting")
  eq(progress.text("r", { kind = "end" }), "lsp-agent: fix the bug done")
end)

test("tool calls show sorted compact arguments", function()
  eq(format.describe({ runId = "r", kind = "tool_call", name = "read_file", arguments = { path = "a.py", start = 3 } }),
    '-> read_file(path="a.py", start=3)')
end)

test("long arguments are cut and newlines escaped", function()
  local text = format.short_args({ content = string.rep("x\n", 100) }, 40)
  eq(#text, 40)
  eq(text:sub(-3), "...")
  eq(text:find("\n"), nil)
end)

test("tool results show status, time and a count of hidden lines", function()
  eq(format.describe({ runId = "r", kind = "tool_result", name = "search_text", ok = false, seconds = 0.1234,
    output = "one\ntwo\nthree\nfour\nfive" }), "<- search_text failed in 0.12s: one\n   two\n   three\n   ... (2 more lines)")
end)

test("plans, proposals and done events are multi-line and tolerate JSON null", function()
  eq(format.describe({ runId = "r", kind = "plan", subtasks = { { id = 1, description = "read" },
    { id = 2, description = "edit", dependencies = { 1 } } }, fallback = vim.NIL }),
    "plan (2 subtasks):\n  1. read\n  2. edit after 1")
  local proposal = vim.split(format.describe({ runId = "r", kind = "proposal", summary = "rename",
    changes = { { path = "a.py", kind = "modify" }, { path = "b.py", kind = "create" } } }), "\n")
  eq(proposal[1], "proposal: 2 file(s) changed - rename")
  eq(proposal[2], "   modify a.py")
  eq(proposal[3], "   create b.py")
  eq(format.describe({ runId = "r", kind = "done", stopReason = "error", iterations = 0, error = "no model",
    answer = vim.NIL }), "done: error after 0 iterations, error: no model")
  eq(format.describe({ runId = "r", kind = "done", stopReason = "complete", iterations = 2, error = vim.NIL,
    answer = "Done.\nAll good." }), "done: complete after 2 iterations\n   answer: Done.\n   All good.")
end)

test("usage, permission, error and unknown kinds stay readable", function()
  eq(format.describe({ runId = "r", kind = "usage", promptTokens = 120, completionTokens = 7, cost = 0.00123 }),
    "tokens: 120 in / 7 out, cost $0.0012")
  eq(format.describe({ runId = "r", kind = "permission", tool = "run", decision = "deny", reason = "no answer" }),
    "permission for run: deny (no answer)")
  eq(format.describe({ runId = "r", kind = "error", message = "rate limited" }), "error: rate limited")
  eq(format.describe({ runId = "r", kind = "mystery", value = 1 }), 'mystery: {"value":1}')
end)

test("transcript lines carry a clock, a short run id and aligned continuation lines", function()
  local lines = format.lines({ runId = "0123456789", kind = "done", stopReason = "complete", iterations = 1,
    answer = "a\nb" })
  eq(#lines, 3)
  assert(lines[1]:match("^%[%d%d:%d%d:%d%d%] %[01234567%] done: complete after 1 iterations$"), lines[1])
  eq(lines[3], string.rep(" ", #"[00:00:00] [01234567] ") .. "   b")
end)

test("a run goes from running to pending edits to applied, newest first", function()
  local seen = {}
  runs.on_change(function(r) seen[#seen + 1] = r.id .. ":" .. r.state .. "/" .. r.proposal end)
  runs.on_event({ runId = "old", kind = "start", task = "first" }, 1)
  runs.started("new", "second", 1)
  runs.on_event({ runId = "new", kind = "proposal", summary = "s", changes = { { path = "a.py", kind = "modify" } } }, 1)
  runs.on_event({ runId = "new", kind = "done", success = true, stopReason = "complete", iterations = 1 }, 1)
  eq(vim.tbl_map(function(r) return r.id end, runs.list()), { "new", "old" })
  eq(vim.tbl_map(function(r) return r.id end, runs.running()), { "old" })
  eq(vim.tbl_map(function(r) return r.id end, runs.pending()), { "new" })
  eq(runs.runs.new.files, { "a.py" })
  eq(runs.status_text(), "agent: 1 running, 1 pending")
  runs.settle("new", "applied")
  runs.settle("old", "rejected") -- no proposal: nothing to settle
  eq(runs.runs.new.proposal, "applied")
  eq(runs.runs.old.proposal, "none")
  eq(seen, { "old:running/none", "new:running/none", "new:running/pending", "new:succeeded/pending",
    "new:succeeded/applied" })
end)

test("cancelled and failed runs are told apart; malformed events are ignored", function()
  runs.on_event({ runId = "c", kind = "done", success = false, stopReason = "cancelled" })
  runs.on_event({ runId = "f", kind = "error", message = "boom" })
  runs.on_event({ runId = "f", kind = "done", success = false, stopReason = "error", error = "boom" })
  eq(runs.runs.c.state, "cancelled")
  eq(runs.runs.f.state, "failed")
  eq(runs.runs.f.error, "boom")
  eq(runs.on_event({ kind = "thought" }), nil)
  eq(runs.on_event("nonsense"), nil)
end)

test("a run whose checks failed has its own state and words, apart from an error", function()
  local failed = "tests fail: `python -m pytest test_calc.py`: 1 failed"
  runs.on_event({ runId = "cf", kind = "proposal", summary = "fixed", changes = { { path = "calc.py", kind = "modify" } } })
  local done = { runId = "cf", kind = "done", success = false, status = "checks_failed", checksFailed = { failed },
    stopReason = "complete", iterations = 3, answer = vim.NIL }
  runs.on_event(done)
  runs.on_event({ runId = "er", kind = "done", success = false, status = "failed", stopReason = "error", error = "down" })
  eq(runs.runs.cf.state, "checks_failed")
  eq(runs.runs.cf.checks_failed, { failed })
  eq(runs.state_text(runs.runs.cf), "checks failed: " .. failed)
  eq(runs.state_text(runs.runs.er), "failed: down")
  eq(format.describe(done), "checks failed: " .. failed .. " (complete) after 3 iterations")
  eq(format.checks_text({ "a", "b" }), "checks failed: a (+1 more)")
  assert(runs.status_text():find("1 checks failed", 1, true), runs.status_text())
  runs.settle("cf", "rejected")
end)

test("the alternatives of a line and the one the user picked read well and update the summary", function()
  local context = { runId = "al", kind = "context", what = "alternatives", versions = { "a", "b" },
    status = "2 different versions of the line pass the tests" }
  eq(format.describe(context), "2 different versions of the line pass the tests (code actions on the line offer the others)")
  runs.on_event({ runId = "al", kind = "proposal", summary = "old", changes = { { path = "pkg/stats.py" } } })
  local picked = { runId = "al", kind = "alternative", path = "pkg/stats.py", line = 12,
    version = "        return min(x, hi)", previous = "        return hi", summary = "Using `return min(x, hi)`" }
  runs.on_event(picked)
  eq(runs.runs.al.summary, "Using `return min(x, hi)`")
  eq(format.describe(picked),
    "alternative used: pkg/stats.py line 12 is now `return min(x, hi)` (was `return hi`); it passes the tests too")
  runs.settle("al", "rejected")
end)

test("streamed words grow the transcript's last line; a streamed thought is not repeated", function()
  local buf = runs.transcript_buffer()
  local function tail(n)
    local count = vim.api.nvim_buf_line_count(buf)
    return vim.api.nvim_buf_get_lines(buf, count - n, count, false)
  end
  runs.on_event({ runId = "live1234", kind = "text", channel = "thought", text = "\nlooking ", first = true })
  runs.on_event({ runId = "live1234", kind = "text", channel = "thought", text = "at it" })
  runs.on_event({ runId = "live1234", kind = "text", channel = "message", text = "It adds\n" })
  runs.on_event({ runId = "live1234", kind = "text", channel = "message", text = "numbers.\n", final = true })
  runs.on_event({ runId = "live1234", kind = "thought", text = "looking at it", iteration = 1, streamed = true })
  local shown = tail(3)
  eq(shown[1]:match("%] (.*)$"), "[live1234] thinking: looking at it")
  eq(shown[2]:match("%] (.*)$"), "[live1234] It adds")
  eq(shown[3], "numbers.")
  runs.on_event({ runId = "live1234", kind = "text", channel = "message", text = "Next.", first = true, final = true })
  eq(tail(1)[1]:match("%] (.*)$"), "[live1234] Next.")
end)

test(":AgentRewind picks an exchange with vim.ui.select and sends lspAgent.rewind for it", function()
  local undo = require("lsp_agent.undo")
  local rows = {
    { number = 1, task = "fix add", applied = { "calc.py" } },
    { number = 2, task = "gone", applied = { "x.py" }, rewound = true },
    { number = 3, task = "swap mul", applied = { "calc.py", "b.py" } },
  }
  local items = undo.rewind_items(rows)
  eq(vim.tbl_map(function(i) return i.exchange end, items), { 1, 0 })
  eq(items[1].text, "1. fix add (drop 1 later; restores calc.py, b.py)")
  local sent, notes = {}, {}
  local function execute(command, arguments, on_result)
    sent[#sent + 1] = { command, arguments[1] }
    if command == "lspAgent.exchanges" then
      on_result({ exchanges = rows })
    else
      on_result({ exchange = 1, dropped = { "r3" }, restored = { "b.py" }, refused = { "calc.py: changed since the apply" } })
    end
    return true
  end
  local select = vim.ui.select
  vim.ui.select = function(choices, opts, on_choice)
    eq(opts.format_item(choices[1]), choices[1].text)
    on_choice(choices[1])
  end
  undo.rewind(execute, function(text, level) notes[#notes + 1] = { text, level } end, "s1")
  vim.ui.select = select
  eq(sent, { { "lspAgent.exchanges", { sessionId = "s1" } }, { "lspAgent.rewind", { exchange = 1, sessionId = "s1" } } })
  eq(notes[1], { "rewound to exchange 1 (1 later exchange(s) dropped): restored b.py; left as they are: "
    .. "calc.py: changed since the apply", vim.log.levels.WARN })
end)

test("the transcript buffer is a read-only scratch buffer that collects every line", function()
  local buf = runs.transcript_buffer()
  eq(vim.bo[buf].buftype, "nofile")
  eq(vim.bo[buf].modifiable, false)
  eq(vim.api.nvim_buf_get_name(buf), "lsp-agent://transcript")
  local text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
  assert(text:find("%[new%] proposal: 1 file%(s%) changed %- s"), text)
  assert(text:find("%[new%] edits applied"), text)
end)

test("line ranges end at the last line's length in UTF-16 units", function()
  local agent = require("lsp_agent")
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, { "a", "héllo 😀" })
  eq(agent.line_range(buf, 1, 2), { start = { line = 0, character = 0 }, ["end"] = { line = 1, character = 8 } })
end)

test("setup replaces list options instead of merging them index by index", function()
  local agent = require("lsp_agent")
  agent.setup({ cmd = { "my-server" }, root_markers = { "x" }, settings = { model = "m" }, progress = false })
  eq(agent.config.cmd, { "my-server" })
  eq(agent.config.root_markers, { "x" })
  eq(agent.config.settings, { model = "m" })
  eq(vim.fn.exists(":AgentAsk"), 2)
  eq(vim.lsp.config.lsp_agent.cmd, { "my-server" })
  eq(vim.lsp.config.lsp_agent.settings, { lspAgent = { model = "m" } })
end)

test("the root is the nearest marker, else the cwd or the file's folder; special buffers get none", function()
  local agent = require("lsp_agent")
  local tmp = vim.fs.normalize(vim.fn.resolve(vim.fn.tempname()))
  vim.fn.mkdir(tmp .. "/proj/.git", "p")
  vim.fn.mkdir(tmp .. "/proj/src", "p")
  vim.fn.mkdir(tmp .. "/loose", "p")
  vim.fn.mkdir(tmp .. "/elsewhere", "p")
  local function buf_for(path)
    local b = vim.fn.bufadd(path)
    vim.fn.bufload(b)
    return b
  end
  agent.setup({ root_markers = { ".git" } })
  eq(agent.root_for(buf_for(tmp .. "/proj/src/a.py")), tmp .. "/proj")
  vim.cmd.cd(tmp .. "/loose")
  eq(agent.root_for(buf_for(tmp .. "/loose/b.py")), tmp .. "/loose")
  eq(agent.root_for(buf_for(tmp .. "/elsewhere/c.py")), tmp .. "/elsewhere")
  eq(agent.root_for(vim.api.nvim_create_buf(false, true)), nil)
  eq(agent.root_for(buf_for("health://")), nil)
  vim.fn.delete(tmp, "rf")
end)

test("on Neovim 0.12 the buffers the server attaches to get native inline completion, unless turned off", function()
  local agent = require("lsp_agent")
  local saved = vim.lsp.inline_completion
  local calls = {}
  vim.lsp.inline_completion = { enable = function(on, filter) calls[#calls + 1] = { on, filter } end }
  agent.setup({})
  local buf = vim.api.nvim_create_buf(true, false)
  local ok, err = pcall(function()
    eq(agent.enable_inline_completion(buf, 1), "native")
    eq(calls, { { true, { bufnr = buf } } })
    vim.api.nvim_set_current_buf(buf)
    eq(vim.fn.maparg("<M-l>", "i", false, true).desc, "lsp-agent: accept the inline completion")
    eq(vim.fn.maparg("<C-]>", "i", false, true).desc, nil) -- Neovim's own dismissal there
    agent.setup({ inline_completion = false })
    eq(agent.enable_inline_completion(vim.api.nvim_create_buf(true, false), 1), false)
    eq(#calls, 1)
  end)
  vim.lsp.inline_completion = saved
  assert(ok, err)
end)

test("on Neovim 0.11 the plugin's ghost text takes over, with its keys configurable", function()
  local agent = require("lsp_agent")
  local saved = vim.lsp.inline_completion
  vim.lsp.inline_completion = nil
  agent.setup({ inline_completion_keys = { accept = "<Tab>", trigger = false } })
  local buf = vim.api.nvim_create_buf(true, false)
  local ok, err = pcall(function()
    eq(agent.enable_inline_completion(buf, 1), "ghost")
    vim.api.nvim_set_current_buf(buf)
    eq(vim.fn.maparg("<Tab>", "i", false, true).desc, "lsp-agent: accept the inline completion")
    eq(vim.fn.maparg("<C-]>", "i", false, true).desc, "lsp-agent: dismiss the inline completion")
    eq(vim.fn.maparg("<M-\\>", "i", false, true).desc, nil)
    eq(require("lsp_agent.ghost").accept(buf), false) -- nothing shown: the key types itself
  end)
  require("lsp_agent.ghost").detach(buf)
  vim.lsp.inline_completion = saved
  agent.setup({})
  assert(ok, err)
end)

for _, t in ipairs(tests) do
  local ok, err = pcall(t.fn)
  if ok then
    passed = passed + 1
  else
    failed = failed + 1
    io.stdout:write(("FAIL %s: %s\n"):format(t.name, err))
  end
end
io.stdout:write(("%d passed, %d failed\n"):format(passed, failed))
os.exit(failed == 0 and 0 or 1)
