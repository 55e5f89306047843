--- lsp-agent for Neovim: registers the `lsp-agent serve` language server and the :Agent* commands.
local runs = require("lsp_agent.runs")
local conversation = require("lsp_agent.conversation")

local M = {}

local NAME = "lsp_agent"
local EVENT = "lspAgent/event"
local has_011 = vim.fn.has("nvim-0.11") == 1

---@class lsp_agent.Config
M.defaults = {
  --- Command that starts the server, e.g. { "/path/to/venv/bin/python", "-m", "lsp_agent", "serve" }.
  cmd = { "lsp-agent", "serve" },
  --- Extra environment for the server (API keys, LSP_AGENT_MODEL, ...).
  cmd_env = nil,
  --- Files that mark a workspace root (the first found upwards from the buffer).
  root_markers = { ".git", ".hg", "pyproject.toml", "setup.py", "package.json", "Cargo.toml", "go.mod", ".lsp-agent" },
  --- Attach to these filetypes only; nil attaches to every buffer with a filetype.
  filetypes = nil,
  --- The `lspAgent` settings the server reads: model, apiBase, apiKey, toolCalling, maxIterations, plan, style,
  --- index = { exclude, maxFileSize }, permissions, mcpServers.
  settings = {},
  --- Show $/progress messages of the server in the command line ("echo"), through vim.notify ("notify"), or not (false).
  progress = "echo",
  --- How :AgentTranscript opens the transcript.
  transcript_split = "botright vsplit",
  --- Session id: follow-up asks of this Neovim see what was applied or rejected before.
  session_id = nil,
  --- Show the server's inline completions as ghost text in the buffers it attaches to: Neovim 0.12's
  --- vim.lsp.inline_completion, else the plugin's own (see :help lsp_agent-inline-completion).
  inline_completion = true,
  --- Insert-mode keys of inline completion (false: no mapping); with nothing to do a key types itself.
  inline_completion_keys = { accept = "<M-l>", dismiss = "<C-]>", trigger = "<M-\\>" },
  --- Neovim 0.11: wait this long after a keystroke before asking (the server waits `completionDebounceMs` more).
  inline_completion_debounce_ms = 30,
}

M.config = vim.deepcopy(M.defaults)
M.progress_seen = {}

local function notify(msg, level)
  vim.notify("lsp-agent: " .. msg, level or vim.log.levels.INFO)
end

--- The lsp-agent client for `bufnr` (or any running one).
function M.client(bufnr)
  local clients = vim.lsp.get_clients({ name = NAME, bufnr = bufnr })
  if #clients == 0 then
    clients = vim.lsp.get_clients({ name = NAME })
  end
  return clients[1]
end

local function request(client, method, params, handler, bufnr)
  if has_011 then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

--- Run a server command (`workspace/executeCommand`); `on_result(result)` on success, errors are notified.
function M.execute(command, arguments, on_result, bufnr)
  local client = M.client(bufnr)
  if not client then
    notify("the server is not running (check :checkhealth lsp_agent and the `cmd` given to setup())", vim.log.levels.ERROR)
    return false
  end
  request(client, "workspace/executeCommand", { command = command, arguments = arguments }, function(err, result)
    if err then
      notify(("%s failed: %s"):format(command, err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    if on_result then
      on_result(result, client)
    end
  end, bufnr)
  return true
end

local function utf16_len(line)
  if has_011 then
    return vim.str_utfindex(line, "utf-16")
  end
  local _, u16 = vim.str_utfindex(line)
  return u16
end

--- The LSP range of lines line1..line2 (1-based, inclusive) of `bufnr`, whole lines.
function M.line_range(bufnr, line1, line2)
  local last = vim.api.nvim_buf_get_lines(bufnr, line2 - 1, line2, false)[1] or ""
  return { start = { line = line1 - 1, character = 0 }, ["end"] = { line = line2 - 1, character = utf16_len(last) } }
end

--- Start a run: opts = { task, plan?, range? = {line1, line2}, bufnr? }.
function M.ask(opts)
  local bufnr = opts.bufnr or vim.api.nvim_get_current_buf()
  local task = vim.trim(opts.task or "")
  if task == "" then
    notify("describe the task, e.g. :AgentAsk add a --verbose flag", vim.log.levels.WARN)
    return
  end
  local params = { task = task, sessionId = M.config.session_id, model = opts.model, folder = opts.folder }
  params.readFolders = opts.read_folders -- other workspace folders the run may read (`--read=NAME`)
  local name = vim.api.nvim_buf_get_name(bufnr)
  local has_file = name ~= "" and vim.bo[bufnr].buftype == ""
  if not has_file and opts.folder == nil then -- a multi-root workspace: ask which folder (see ask_options.lua)
    return require("lsp_agent.ask_options").folder(M.client(bufnr), false, function(folder)
      M.ask(vim.tbl_extend("force", opts, { folder = folder or false }))
    end)
  end
  params.folder = opts.folder or nil
  if has_file then
    params.uri = vim.uri_from_bufnr(bufnr)
    if opts.range then
      params.range = M.line_range(bufnr, opts.range[1], opts.range[2])
    end
  end
  if opts.plan then
    params.plan = true
  end
  conversation.decorate(params, bufnr) -- #diagnostics: the buffer's diagnostics from every language server
  M.execute("lspAgent.ask", { params }, function(result, client)
    if type(result) == "table" and type(result.runId) == "string" then
      runs.started(result.runId, task, client.id)
      notify(("run %s started: %s"):format(result.runId, task))
    end
  end, bufnr)
end

--- The run a command acts on: the one named, else the newest candidate.
local function target(candidates, run_id, what)
  if run_id and run_id ~= "" then
    return run_id
  end
  local run = candidates[1]
  if not run then
    notify("no " .. what, vim.log.levels.WARN)
    return nil
  end
  return run.id
end

function M.cancel(run_id)
  local id = target(runs.running(), run_id, "running run")
  if id then
    M.execute("lspAgent.cancel", { { runId = id } }, function()
      notify("cancelling run " .. id)
    end)
  end
end

--- Ask the server to send the run's edits (workspace/applyEdit); Neovim applies them to buffers.
function M.apply(run_id)
  local id = target(runs.pending(), run_id, "run with pending edits")
  if not id then
    return
  end
  M.execute("lspAgent.applyEdits", { { runId = id } }, function(result)
    if type(result) == "table" and result.applied == true then
      runs.settle(id, result.state)
      local refused = type(result.refused) == "table" and result.refused or {}
      if #refused > 0 then
        notify("applied, but refused: " .. table.concat(refused, "; "), vim.log.levels.WARN)
      else
        notify("applied the edits of run " .. id)
      end
    else
      local reason = type(result) == "table" and result.failureReason
      notify("edits not applied" .. (type(reason) == "string" and (": " .. reason) or ""), vim.log.levels.WARN)
    end
  end)
end

--- Revert the last applied edits to the exact text before them (see lua/lsp_agent/undo.lua).
function M.undo()
  return require("lsp_agent.undo").undo(M.execute, notify)
end

--- Back to exchange `number` of the conversation (a picker when nil), see lua/lsp_agent/undo.lua.
function M.rewind(number, on_done)
  return require("lsp_agent.undo").rewind(M.execute, notify, M.config.session_id, number, on_done)
end

--- Reject a run's edits: all of them, or `files` (URIs or workspace-relative paths); `reason` is optional.
function M.reject(run_id, reason, files)
  local id = target(runs.pending(), run_id, "run with pending edits")
  if not id then
    return
  end
  local args = { runId = id }
  if reason and vim.trim(reason) ~= "" then
    args.reason = vim.trim(reason)
  end
  if files and #files > 0 then
    args.files = files
  end
  M.execute("lspAgent.rejectEdits", { args }, function(result)
    runs.settle(id, type(result) == "table" and result.state or "rejected")
    notify("rejected " .. (args.files and table.concat(args.files, ", ") or "the edits") .. " of run " .. id)
  end)
end

--- The remembered "Allow always" / "Reject always" answers: list them, or revoke one (`key` as listed, or "all").
function M.permissions(action, key)
  local args = { action = action or "list" }
  if args.action == "revoke" then
    if not key or vim.trim(key) == "" then
      notify('name the rule to revoke as :AgentPermissions lists it, e.g. :AgentPermissions revoke run_command: pytest -q', vim.log.levels.WARN)
      return
    end
    if vim.trim(key) == "all" then
      args.all = true
    else
      args.key = vim.trim(key)
    end
  end
  M.execute("lspAgent.permissions", { args }, function(result)
    local lines = {}
    for _, r in ipairs((type(result) == "table" and result.revoked) or {}) do
      lines[#lines + 1] = "revoked: " .. r.decision .. " " .. r.key
    end
    for _, w in ipairs((type(result) == "table" and result.workspaces) or {}) do
      if #w.rules == 0 then
        lines[#lines + 1] = "no remembered permissions for " .. w.workspace
      else
        lines[#lines + 1] = ("remembered permissions for %s (%s):"):format(w.workspace, w.file)
        for _, r in ipairs(w.rules) do
          lines[#lines + 1] = ("  %-5s  %s"):format(r.decision, r.key)
        end
      end
    end
    M.last_permissions = lines
    notify(table.concat(lines, "\n"))
  end)
end

function M.reindex()
  M.execute("lspAgent.reindex", {}, function()
    notify("reindexing the workspace")
  end)
end

--- Open the transcript buffer in a split (or jump to it).
function M.transcript()
  local buf = runs.transcript_buffer()
  local wins = vim.fn.win_findbuf(buf)
  if #wins > 0 then
    vim.api.nvim_set_current_win(wins[1])
  else
    vim.cmd(M.config.transcript_split)
    vim.api.nvim_win_set_buf(0, buf)
  end
  vim.api.nvim_win_set_cursor(0, { vim.api.nvim_buf_line_count(buf), 0 })
end

--- Statusline text: running runs and pending edits, "" when idle.
function M.statusline()
  return runs.status_text()
end

--- Handler of `lspAgent/event` notifications.
local function on_event(_, result, ctx)
  runs.on_event(result, ctx and ctx.client_id)
end

--- Code actions run their commands through vim.lsp.commands first: complete or track the agent's ones.
local function register_code_action_commands()
  vim.lsp.commands["lspAgent.ask"] = function(command, ctx)
    local params = vim.deepcopy((command.arguments or {})[1] or {})
    params.needsTask = nil
    params.sessionId = params.sessionId or M.config.session_id
    conversation.decorate(params, ctx.bufnr) -- "Ask agent to fix": the diagnostic's neighbours go along
    local function send(task)
      if not task or vim.trim(task) == "" then
        return
      end
      params.task = task
      M.execute("lspAgent.ask", { params }, function(result, client)
        if type(result) == "table" and type(result.runId) == "string" then
          runs.started(result.runId, task, client.id)
          notify(("run %s started: %s"):format(result.runId, task))
        end
      end, ctx.bufnr)
    end
    if type(params.task) == "string" and vim.trim(params.task) ~= "" then
      send(params.task)
    else
      vim.ui.input({ prompt = "Ask agent about the selection: " }, send)
    end
  end
  vim.lsp.commands["lspAgent.rejectEdits"] = function(command, ctx)
    local params = vim.deepcopy((command.arguments or {})[1] or {})
    local function send(reason)
      if reason == nil then
        return -- dismissed: the edits stay
      end
      if vim.trim(reason) ~= "" then
        params.reason = vim.trim(reason)
      end
      M.execute(command.command, { params }, function(result)
        if params.runId then
          runs.settle(params.runId, type(result) == "table" and result.state or "rejected")
        end
      end, ctx.bufnr)
    end
    if type(params.reason) == "string" then
      send(params.reason)
    else
      vim.ui.input({ prompt = "Reason (optional): " }, send)
    end
  end
end

local function on_progress(args)
  local data = args.data or {}
  local client = vim.lsp.get_client_by_id(data.client_id or -1)
  if not client or client.name ~= NAME then
    return
  end
  local value = (data.params or {}).value or {}
  M.progress_seen[#M.progress_seen + 1] =
    { token = (data.params or {}).token, kind = value.kind, title = value.title, message = value.message }
  local mode = M.config.progress
  if not mode then
    return
  end
  local text = require("lsp_agent.progress").text((data.params or {}).token, value)
  if mode == "notify" then
    vim.notify(text)
  else
    vim.api.nvim_echo({ { text:sub(1, vim.v.echospace > 0 and vim.v.echospace or 80) } }, false, {})
  end
end

--- The workspace root for a buffer, or nil for buffers the agent should not attach to (help, health, URIs, ...).
function M.root_for(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  if vim.bo[bufnr].buftype ~= "" or name == "" or name:match("^%a[%w+.-]*://") then
    return nil
  end
  local root = vim.fs.root(bufnr, M.config.root_markers)
  if root then
    return root
  end
  -- No marker: the working directory when the file is inside it, else the file's own directory.
  local cwd = vim.fn.getcwd()
  local path = vim.fs.normalize(vim.fn.fnamemodify(name, ":p"))
  if path:sub(1, #cwd + 1) == cwd .. "/" then
    return cwd
  end
  return vim.fs.dirname(path)
end

local function lsp_config()
  return {
    cmd = M.config.cmd,
    cmd_env = M.config.cmd_env,
    root_markers = M.config.root_markers,
    root_dir = function(bufnr, on_dir)
      local root = M.root_for(bufnr)
      if root then
        on_dir(root)
      end
    end,
    filetypes = M.config.filetypes,
    settings = { lspAgent = M.config.settings },
    init_options = M.config.settings,
    handlers = { [EVENT] = on_event },
  }
end

local function start_010(bufnr)
  local root = M.root_for(bufnr)
  if not root then
    return
  end
  local fts = M.config.filetypes
  if fts and not vim.tbl_contains(fts, vim.bo[bufnr].filetype) then
    return
  end
  local cfg = lsp_config()
  cfg.name = NAME
  cfg.root_dir = root
  vim.lsp.start(cfg, { bufnr = bufnr })
end

local function create_commands()
  local cmd = vim.api.nvim_create_user_command
  local function ask_command(plan)
    return function(o)
      local range = o.range > 0 and { o.line1, o.line2 } or nil
      local bufnr = vim.api.nvim_get_current_buf()
      local task, model, reads = require("lsp_agent.ask_options").parse(o.args)
      local opts = { plan = plan, range = range, bufnr = bufnr, model = model, read_folders = reads }
      if task ~= "" then
        M.ask(vim.tbl_extend("force", opts, { task = task }))
      else
        vim.ui.input({ prompt = plan and "Plan and ask agent: " or "Ask agent: " }, function(task)
          if task then
            M.ask(vim.tbl_extend("force", opts, { task = task }))
          end
        end)
      end
    end
  end
  local function complete(arglead, cmdline)
    local first = arglead:sub(1, 1)
    if first == "@" or first == "#" then
      return conversation.complete(arglead) -- @file, @symbol, @selection, #diagnostics
    end
    local options = require("lsp_agent.ask_options")
    return options.complete(arglead, cmdline, function() return options.server_models(M.client()) end,
      function() return options.folder_names(M.client()) end)
  end
  cmd("AgentAsk", ask_command(false), {
    nargs = "*", range = true, complete = complete, desc = "Ask the agent (a range sends the selection; --model=NAME picks the model; --read=FOLDER reads another folder)",
  })
  cmd("AgentPlan", ask_command(true), { nargs = "*", range = true, complete = complete, desc = "Plan the task, then ask the agent" })
  conversation.create_commands()
  cmd("AgentCancel", function(o) M.cancel(o.args) end, { nargs = "?", desc = "Cancel the newest (or the given) run" })
  cmd("AgentApply", function(o) M.apply(o.args) end, { nargs = "?", desc = "Apply the newest (or the given) run's edits" })
  cmd("AgentUndo", function() M.undo() end, { desc = "Revert the last applied edits (refused if a file changed since)" })
  cmd("AgentRewind", function(o)
    local number = tonumber(o.args)
    if o.args ~= "" and (number == nil or number < 0 or number % 1 ~= 0) then
      notify("usage: :AgentRewind [N] (N: the exchange to go back to; without it, pick one)", vim.log.levels.WARN)
      return
    end
    M.rewind(number)
  end, { nargs = "?", desc = "Back to an earlier exchange: files applied since restored, the conversation goes on from there" })
  cmd("AgentReject", function(o)
    if o.args ~= "" then
      M.reject(nil, o.args)
    else
      vim.ui.input({ prompt = "Reason (optional): " }, function(reason)
        if reason ~= nil then
          M.reject(nil, reason)
        end
      end)
    end
  end, { nargs = "*", desc = "Reject the newest pending edits, with an optional reason" })
  cmd("AgentTranscript", M.transcript, { desc = "Show the agent's transcript" })
  cmd("AgentPermissions", function(o)
    local action, key = o.args:match("^%s*(%S*)%s*(.-)%s*$")
    M.permissions(action ~= "" and action or "list", key)
  end, { nargs = "*", desc = "List remembered permissions, or: revoke <rule> | revoke all" })
  cmd("AgentReindex", M.reindex, { desc = "Rebuild the workspace index" })
end

--- Turn on inline completion (ghost text) for a buffer the server attached to: Neovim 0.12's native one, else the
--- plugin's extmarks (lsp_agent.ghost). Returns "native", "ghost", or false (the option is off).
function M.enable_inline_completion(bufnr, client_id)
  if not M.config.inline_completion then
    return false
  end
  local ghost = require("lsp_agent.ghost")
  local inline = vim.lsp.inline_completion
  local native = inline ~= nil and inline.enable ~= nil
  if native then
    inline.enable(true, { bufnr = bufnr })
  else
    ghost.debounce_ms = M.config.inline_completion_debounce_ms
    ghost.attach(bufnr, client_id)
  end
  ghost.map_keys(bufnr, M.config.inline_completion_keys or {}, native)
  return native and "native" or "ghost"
end

local function on_attach(args)
  local client = vim.lsp.get_client_by_id(args.data and args.data.client_id or -1)
  if client and client.name == NAME then
    M.enable_inline_completion(args.buf, client.id)
  end
end

--- Configure and enable the server; see :help lsp_agent.
function M.setup(opts)
  opts = opts or {}
  M.config = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts)
  for _, list_key in ipairs({ "cmd", "root_markers", "filetypes" }) do
    if opts[list_key] ~= nil then -- lists replace the defaults instead of merging index by index
      M.config[list_key] = vim.deepcopy(opts[list_key])
    end
  end
  if type(M.config.cmd) == "string" then
    M.config.cmd = { M.config.cmd }
  end
  register_code_action_commands()
  create_commands()
  if not M.did_setup then
    runs.on_change(function()
      vim.schedule(function() vim.cmd("redrawstatus!") end) -- statusline() changed
    end)
  end
  local group = vim.api.nvim_create_augroup("lsp_agent", { clear = true })
  vim.api.nvim_create_autocmd("LspProgress", { group = group, callback = on_progress })
  vim.api.nvim_create_autocmd("LspAttach", { group = group, callback = on_attach })
  if vim.lsp.config ~= nil and vim.lsp.enable ~= nil then -- Neovim 0.11+
    vim.lsp.config(NAME, lsp_config())
    vim.lsp.enable(NAME)
  else -- Neovim 0.10: start (or reuse) a client from FileType
    vim.api.nvim_create_autocmd("FileType", { group = group, callback = function(a) start_010(a.buf) end })
    for _, buf in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_is_loaded(buf) and vim.bo[buf].filetype ~= "" then
        start_010(buf)
      end
    end
  end
  M.did_setup = true
end

return M
