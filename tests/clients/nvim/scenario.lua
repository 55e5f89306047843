-- Drives the lsp_agent plugin in a real headless Neovim against the real server and the scripted model.
-- Usage: nvim --clean --headless -l scenario.lua CONFIG.json ; writes CONFIG.out (JSON) for pytest to assert on.
-- CONFIG.modes lists the scenarios to play in turn in this one Neovim and server (a server start costs seconds:
-- litellm's import). Before each, the scenario writes STAGES/<mode>.ready and waits for STAGES/<mode>.go: pytest
-- has then loaded that scenario's script into the model. Each starts on greet.py as on disk, in a new conversation,
-- and records its own results, transcript lines and progress (CONFIG.out has them by mode).
local cfg = vim.json.decode(assert(io.open(arg[1])):read("a"))
vim.opt.rtp:prepend(cfg.plugin)
vim.cmd("filetype on")

local agent = require("lsp_agent")
local runs = require("lsp_agent.runs")
local results = { edits = {}, marks = {} } -- the current scenario's (see play)
local stages = {}
local stage_base -- the newest run before the current scenario began
local t0 = vim.uv.hrtime()
local function mark(name)
  results.marks[#results.marks + 1] = { name, math.floor((vim.uv.hrtime() - t0) / 1e6) }
end

local function wait(what, ms, cond)
  if not vim.wait(ms, cond, 20) then
    error(("timed out after %d ms waiting for %s"):format(ms, what))
  end
end

local function lines(buf)
  return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n") .. "\n"
end

local function snapshot(run)
  return { id = run.id, state = run.state, proposal = run.proposal, files = run.files, kinds = run.kinds,
    task = run.task, error = run.error }
end

local function newest_run()
  return runs.list()[1]
end

--- The newest run of the current scenario (nil before it started one).
local function stage_run()
  local r = newest_run()
  return r and r.id ~= stage_base and r or nil
end

local function finished_run(before)
  before = before or stage_base
  wait("the run to finish", 120000, function()
    local r = newest_run()
    return r and r.id ~= before and r.state ~= "running" and vim.tbl_contains(r.kinds, "done")
  end)
  return newest_run()
end

local function code_action_titles(buf, line)
  local client = agent.client(buf)
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    range = { start = { line = line, character = 0 }, ["end"] = { line = line, character = 0 } },
    context = { diagnostics = {} },
  }
  local resp = client:request_sync("textDocument/codeAction", params, 5000, buf)
  return vim.tbl_map(function(a) return a.title end, (resp and resp.result) or {})
end

-- Record what the server sends with workspace/applyEdit (Neovim takes plain `changes`), then apply as usual.
local default_apply = vim.lsp.handlers["workspace/applyEdit"]
vim.lsp.handlers["workspace/applyEdit"] = function(err, params, ctx)
  results.edits[#results.edits + 1] = {
    changes = params.edit.changes ~= nil,
    documentChanges = params.edit.documentChanges ~= nil,
  }
  return default_apply(err, params, ctx)
end

--- Run `fn`, then wait for a vim.notify message containing `needle`; returns it.
local function notified_after(fn, needle)
  local seen, original = nil, vim.notify
  vim.notify = function(msg, ...)
    if type(msg) == "string" and msg:find(needle, 1, true) then
      seen = msg
    end
    return original(msg, ...)
  end
  fn()
  wait("a message about " .. needle, 10000, function() return seen ~= nil end)
  vim.notify = original
  return seen
end

--- How many "lsp-agent: indexing" progress reports of `kind` (begin/report/end) arrived so far.
local function indexing_progress(kind)
  local tokens, n = {}, 0
  for _, p in ipairs(agent.progress_seen) do
    if p.kind == "begin" and p.title == "lsp-agent: indexing" then
      tokens[p.token] = true
    end
    if p.kind == kind and tokens[p.token] then
      n = n + 1
    end
  end
  return n
end

-- The commands a user types: prompts for the task and the reason, the streaming transcript window, reindex.
local function commands_scenario(buf)
  local answers = {
    ["Ask agent: "] = "ASK-TASK: what does greet do?",
    ["Plan and ask agent: "] = "PLAN-TASK: document greet",
    ["Reason (optional): "] = "",
  }
  results.prompts = {}
  vim.ui.input = function(opts, on_confirm)
    results.prompts[#results.prompts + 1] = opts.prompt
    on_confirm(answers[opts.prompt])
  end
  local source_win = vim.api.nvim_get_current_win()
  vim.cmd("AgentTranscript")
  local twin = vim.api.nvim_get_current_win()
  local tbuf = vim.api.nvim_win_get_buf(twin)
  results.transcript_window = { split = twin ~= source_win, name = vim.api.nvim_buf_get_name(tbuf),
    buftype = vim.bo[tbuf].buftype, modifiable = vim.bo[tbuf].modifiable, lines = vim.api.nvim_buf_line_count(tbuf) }
  vim.api.nvim_set_current_win(source_win)

  vim.cmd("AgentAsk")
  wait("the model's first words in the transcript", 30000, function()
    return lines(tbuf):find("greet returns", 1, true) ~= nil
  end)
  results.live = { kinds = vim.deepcopy(stage_run().kinds), transcript = lines(tbuf) }
  local asked = finished_run(nil)
  results.ask = snapshot(asked)
  results.ask.answer = asked.answer
  results.transcript_window.lines_after = vim.api.nvim_buf_line_count(tbuf)
  results.transcript_window.cursor = vim.api.nvim_win_get_cursor(twin)[1]

  vim.cmd("AgentPlan")
  local planned = finished_run(asked.id)
  vim.cmd("AgentReject")
  wait("the rejection", 10000, function() return planned.proposal == "rejected" end)
  results.plan = snapshot(planned)
  results.buffer = lines(buf)

  wait("the first index build to end", 30000, function() return indexing_progress("end") > 0 end)
  local begins, ends = indexing_progress("begin"), indexing_progress("end")
  vim.cmd("AgentReindex")
  wait("a reindex progress to begin and end", 30000, function()
    return indexing_progress("begin") > begins and indexing_progress("end") > ends
  end)
  results.reindexed = true
end

-- Reject one hunk by its code action (with a reason), apply the other, then answer a permission prompt.
function hunks_and_permissions_scenario(buf)
  results.prompts = {}
  vim.ui.input = function(opts, on_confirm)
    results.prompts[#results.prompts + 1] = opts.prompt
    on_confirm("farewell stays untyped")
  end
  vim.cmd("AgentAsk HUNKS-TASK: add type hints")
  local run = finished_run(nil)
  results.hunk_files = vim.deepcopy(run.files)
  results.actions_farewell = code_action_titles(buf, 4)
  vim.api.nvim_win_set_cursor(0, { 5, 0 })
  vim.lsp.buf.code_action({
    filter = function(a) return a.title:find("^Reject this agent change") ~= nil end,
    apply = true,
  })
  wait("the hunk rejection", 10000, function() return vim.tbl_contains(run.kinds, "edits") end)
  results.after_reject = { proposal = run.proposal, actions = code_action_titles(buf, 4) }
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  vim.lsp.buf.code_action({
    filter = function(a) return a.title:find("^Apply agent edit") ~= nil end,
    apply = true,
  })
  wait("the applied hunk to settle the run", 10000, function() return run.proposal == "applied" end)
  results.buffer = lines(buf)

  results.permission_titles, results.permission_ui = nil, nil
  local choose = function(items)
    results.permission_titles = vim.tbl_map(function(a) return a.title end, items)
    for i, a in ipairs(items) do
      if a.title == "Allow always" then
        return i, a
      end
    end
  end
  vim.ui.select = function(items, _, on_choice)
    results.permission_ui = "select"
    local _, item = choose(items)
    on_choice(item)
  end
  vim.cmd("AgentAsk PERMISSION-TASK: echo things")
  local echoed = finished_run(run.id)
  results.permission_kinds = echoed.kinds
  vim.cmd("AgentPermissions")
  wait("the permission listing", 10000, function() return agent.last_permissions ~= nil end)
  results.permissions_listed = agent.last_permissions
  agent.last_permissions = nil
  vim.cmd("AgentPermissions revoke run_command: echo -n")
  wait("the revocation", 10000, function() return agent.last_permissions ~= nil end)
  results.permissions_revoked = agent.last_permissions
end

-- Conversations: #diagnostics from another language server, @mention completion, follow-up, retry, the
-- conversation view, fix-this-diagnostic, a new conversation and a follow-up refused in an empty one.
local function conversation_scenario(buf)
  results.notes = {}
  local default_notify = vim.notify
  vim.notify = function(msg, level)
    results.notes[#results.notes + 1] = { msg = msg, level = level }
    return default_notify(msg, level)
  end
  local ns = vim.api.nvim_create_namespace("fake-pyright")
  vim.diagnostic.set(ns, buf, {
    { lnum = 1, col = 4, end_lnum = 1, end_col = 10, message = "Operator + not supported", severity = 1, source = "pyright", code = "reportOperatorIssue" },
    { lnum = 4, col = 0, message = "farewell is unused", severity = 4, source = "pyright" },
  })
  results.completion = vim.fn.getcompletion("AgentAsk explain @gre", "cmdline")
  results.completion_hash = vim.fn.getcompletion("AgentAsk #dia", "cmdline")
  vim.cmd("AgentAsk CONV-ONE: explain @greet.py and #diagnostics")
  local first = finished_run(nil)
  vim.cmd("AgentFollowUp CONV-TWO: and farewell?")
  local second = finished_run(first.id)
  vim.cmd("AgentRetry")
  local third = finished_run(second.id)
  results.retried = { first = first.id, second = second.id, third = third.id, task = third.task }
  vim.cmd("AgentConversation")
  wait("the conversation view", 10000, function() return require("lsp_agent.conversation").last_shown ~= nil end)
  results.conversation = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  results.conversation_name = vim.api.nvim_buf_get_name(0)
  vim.cmd("wincmd p")
  vim.api.nvim_set_current_buf(buf)
  vim.api.nvim_win_set_cursor(0, { 2, 0 })
  vim.cmd("AgentFixDiagnostic")
  local fixed = finished_run(third.id)
  results.fix_task = fixed.task
  vim.api.nvim_win_set_cursor(0, { 3, 0 })
  vim.cmd("AgentFixDiagnostic") -- an empty line: nothing to fix
  local old_session = agent.config.session_id
  vim.cmd("AgentNew")
  wait("the new conversation", 10000, function() return agent.config.session_id ~= old_session end)
  vim.cmd("AgentFollowUp CONV-FOUR: more?")
  wait("the refusal", 10000, function()
    for _, n in ipairs(results.notes) do
      if n.msg:find("nothing to follow up", 1, true) then
        return true
      end
    end
    return false
  end)
  vim.cmd("AgentAsk CONV-FIVE: fresh start")
  finished_run(fixed.id)
  vim.notify = default_notify
  vim.diagnostic.reset(ns, buf)
end

local function health_scenario()
  -- No buffer opened: the health check must start the server itself to tell whether it works.
  agent.setup({
    cmd = { cfg.python, "-m", "lsp_agent", "serve" },
    cmd_env = { PYTHONPATH = cfg.repo, LITELLM_LOCAL_MODEL_COST_MAP = "True" },
    settings = {},
  })
  vim.cmd("checkhealth lsp_agent")
  results.health = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  agent.setup({ cmd = { cfg.root .. "/no-such-server" }, settings = {} })
  vim.cmd("checkhealth lsp_agent")
  results.health_broken = vim.api.nvim_buf_get_lines(0, 0, -1, false)
end

local function setup()
  if cfg.modes[1] == "legacy" then
    -- Without vim.lsp.enable (as on Neovim 0.10) the plugin starts the client with vim.lsp.start on FileType.
    vim.lsp.enable = nil
  end
  agent.setup({
    cmd = { cfg.python, "-m", "lsp_agent", "serve" },
    cmd_env = { PYTHONPATH = cfg.repo, LITELLM_LOCAL_MODEL_COST_MAP = "True" },
    settings = vim.tbl_extend("force", { model = "openai/scripted", apiBase = cfg.base_url, apiKey = "test",
      maxIterations = 5 }, cfg.settings or {}),
    progress = false,
  })
end

local ui_input, ui_select, notify = vim.ui.input, vim.ui.select, vim.notify

--- Open the scenario's file as on disk, attached, in a new conversation after the first scenario.
local function start_stage(first)
  vim.ui.input, vim.ui.select, vim.notify = ui_input, ui_select, notify
  vim.cmd("silent! only")
  vim.cmd("edit! " .. vim.fn.fnameescape(cfg.root .. "/" .. (cfg.open or "greet.py")))
  local buf = vim.api.nvim_get_current_buf()
  wait("the lsp_agent client to attach", 30000, function()
    return agent.client(buf) ~= nil and #vim.lsp.get_clients({ bufnr = buf, name = "lsp_agent" }) > 0
  end)
  results.root_dir = agent.client(buf).root_dir
  mark("attached")
  if not first then
    local old_session = agent.config.session_id
    vim.cmd("AgentNew")
    wait("a new conversation", 10000, function() return agent.config.session_id ~= old_session end)
  end
  stage_base = newest_run() and newest_run().id
  return buf
end

local function scenario(mode, buf)
  if mode == "apply" then
    vim.cmd("1,2AgentAsk APPLY-TASK: make greet use an f-string")
    local run = finished_run(nil)
    results.after_ask = snapshot(run)
    wait("hint diagnostics on the changed lines", 10000, function() return #vim.diagnostic.get(buf) > 0 end)
    results.hints = vim.tbl_map(function(d)
      return { lnum = d.lnum, source = d.source, severity = d.severity }
    end, vim.diagnostic.get(buf))
    results.actions = code_action_titles(buf, 1)
    vim.api.nvim_win_set_cursor(0, { 2, 4 })
    vim.lsp.buf.code_action({
      filter = function(a) return a.title:find("^Apply agent edit") ~= nil end,
      apply = true,
    })
    wait("the code action to apply and be recorded", 10000, function() return run.proposal == "applied" end)
    results.after_code_action = lines(buf)
    results.diagnostics_after_apply = #vim.diagnostic.get(buf)

    vim.cmd("AgentAsk COMMAND-TASK: make farewell use an f-string")
    local second = finished_run(run.id)
    results.second = snapshot(second)
    vim.cmd("AgentApply")
    wait(":AgentApply to apply the edits", 10000, function() return second.proposal == "applied" end)
    results.after_apply_command = lines(buf)
    results.modified = vim.bo[buf].modified
    -- A line typed after the apply: :AgentUndo refuses and changes nothing.
    vim.api.nvim_buf_set_lines(buf, -1, -1, false, { "# typed after the apply" })
    results.undo_refused = notified_after(function() vim.cmd("AgentUndo") end, "undoApply")
    results.after_refused_undo = lines(buf)
    vim.api.nvim_buf_set_lines(buf, -2, -1, false, {})

    vim.cmd("checkhealth lsp_agent")
    results.health = vim.api.nvim_buf_get_lines(0, 0, -1, false)
    vim.cmd("bwipeout")
  elseif mode == "reject" then
    vim.cmd("AgentAsk REJECT-TASK: rename greet")
    local run = finished_run(nil)
    results.after_ask = snapshot(run)
    wait("hint diagnostics", 10000, function() return #vim.diagnostic.get(buf) > 0 end)
    results.actions_before = code_action_titles(buf, 0)
    vim.cmd("AgentReject the name greet is part of the public API")
    wait("the rejection", 10000, function() return run.proposal == "rejected" end)
    wait("the hints to clear", 10000, function() return #vim.diagnostic.get(buf) == 0 end)
    results.actions_after = code_action_titles(buf, 0)
    results.buffer = lines(buf)
    results.modified = vim.bo[buf].modified
  elseif mode == "cancel" then
    -- Start the run from the "Ask agent about this selection" code action; the plugin asks for the task.
    vim.ui.input = function(opts, on_confirm)
      results.input_prompt = opts.prompt
      on_confirm("CANCEL-TASK: think for a long time")
    end
    vim.lsp.buf.code_action({
      range = { start = { 1, 0 }, ["end"] = { 2, 0 } },
      filter = function(a) return a.title == "Ask agent about this selection" end,
      apply = true,
    })
    wait("the run to start", 30000, function()
      local r = stage_run()
      return r and vim.tbl_contains(r.kinds, "start")
    end)
    mark("run started")
    wait("the model to receive the request", 30000, function() return vim.uv.fs_stat(cfg.stages .. "/cancel.busy") ~= nil end)
    local started = vim.uv.hrtime()
    vim.cmd("AgentCancel")
    local run = stage_run()
    wait("the run to end", 10000, function() return run.state ~= "running" end)
    results.cancel_ms = (vim.uv.hrtime() - started) / 1e6
    mark("cancelled")
    results.after_cancel = snapshot(run)
    results.buffer = lines(buf)
  elseif mode == "legacy" then
    results.enabled_by_config = vim.lsp.config ~= nil and vim.lsp.enable ~= nil
    vim.cmd("AgentAsk LEGACY-TASK: make greet use an f-string")
    local run = finished_run(nil)
    results.after_ask = snapshot(run)
    vim.cmd("AgentApply")
    wait(":AgentApply to apply the edits", 10000, function() return run.proposal == "applied" end)
    results.buffer = lines(buf)
    results.undone = notified_after(function() vim.cmd("AgentUndo") end, "undid")
    results.after_undo = lines(buf)
    results.undo_again = notified_after(function() vim.cmd("AgentUndo") end, "undoApply")
  elseif mode == "commands" then
    commands_scenario(buf)
  elseif mode == "hunks" then
    hunks_and_permissions_scenario(buf)
  elseif mode == "conversation" then
    conversation_scenario(buf)
  elseif mode == "alternatives" then
    -- Two versions of the line pass the tests: the code action puts the other one in the proposal, then apply it.
    vim.cmd("AgentAsk " .. cfg.task)
    local run = finished_run(nil)
    results.after_ask = snapshot(run)
    results.actions_before = code_action_titles(buf, cfg.line)
    vim.api.nvim_win_set_cursor(0, { cfg.line + 1, 4 })
    vim.lsp.buf.code_action({ filter = function(a) return a.title:find("^Use alternative") ~= nil end, apply = true })
    wait("the alternative to reach the proposal", 15000, function() return run.summary:find("^Using") ~= nil end)
    results.summary = run.summary
    results.actions_after = code_action_titles(buf, cfg.line)
    vim.lsp.buf.code_action({ filter = function(a) return a.title:find("^Apply agent edit") ~= nil end, apply = true })
    wait("the apply", 10000, function() return run.proposal == "applied" end)
    results.buffer = lines(buf)
  elseif mode == "checks" then
    -- The run's edit leaves greet.py unparsable and it finishes anyway: the run's checks failed, not an error.
    vim.cmd("AgentAsk CHECKS-TASK: break greet")
    local run = finished_run(nil)
    results.after_ask = snapshot(run)
    results.state_text = runs.state_text(run)
    results.status_text = agent.statusline()
    results.checks_failed = run.checks_failed
  end
end

--- The scenario's own part of a list that grows through the session.
local function since(list, from)
  return vim.list_slice(list, from + 1, #list)
end

local function write_out()
  local f = assert(io.open(cfg.out, "w"))
  f:write(vim.json.encode({ stages = stages }))
  f:close()
end

--- Tell pytest the next scenario is about to begin; wait for it to load that scenario's script into the model.
local function gate(mode)
  local ready = assert(io.open(("%s/%s.ready"):format(cfg.stages, mode), "w"))
  ready:close()
  wait("pytest to load the script of " .. mode, 60000, function()
    return vim.uv.fs_stat(("%s/%s.go"):format(cfg.stages, mode)) ~= nil
  end)
end

local function play(mode, first)
  results = { mode = mode, edits = {}, marks = {} }
  stages[mode] = results
  -- A run still going (a scenario that failed) would take the next scenario's script.
  local running = function() return #runs.list(function(r) return r.state == "running" end) > 0 end
  if not vim.wait(60000, function() return not running() end, 50) then
    vim.cmd("AgentCancel")
    vim.wait(10000, function() return not running() end, 50)
  end
  gate(mode)
  local ok, err = xpcall(function()
    if mode == "health" then
      return health_scenario()
    end
    local tbuf = runs.transcript_buffer()
    local buf = start_stage(first)
    local transcript_from, progress_from = vim.api.nvim_buf_line_count(tbuf), #agent.progress_seen
    scenario(mode, buf)
    results.transcript = vim.api.nvim_buf_get_lines(tbuf, transcript_from, -1, false)
    results.progress = since(agent.progress_seen, progress_from)
    results.disk = assert(io.open(cfg.root .. "/greet.py")):read("a")
  end, debug.traceback)
  mark("scenario done")
  results.ok, results.error = ok, (not ok) and tostring(err) or nil
  write_out()
  return ok
end

local all_ok = true
if cfg.modes[1] ~= "health" then
  setup()
end
for i, mode in ipairs(cfg.modes) do
  all_ok = play(mode, i == 1) and all_ok
end
-- Ask the server to shut down without waiting: after a run it takes about 3 s to exit, so pytest, which started
-- Neovim in a process group of its own, kills what is left of the group once Neovim has exited.
for _, client in ipairs(vim.lsp.get_clients({ name = "lsp_agent" })) do
  client:stop()
end
write_out()
os.exit(all_ok and 0 or 1)
