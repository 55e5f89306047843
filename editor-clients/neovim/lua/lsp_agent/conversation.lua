--- Conversations, @mentions and #diagnostics for the Neovim client: :AgentNew, :AgentFollowUp, :AgentRetry,
--- :AgentConversation, completion of @mentions in :AgentAsk, and the diagnostics every language server reports.
local runs = require("lsp_agent.runs")

local M = {}

local OWN_SOURCE = "lsp-agent" -- the server's own hint diagnostics are not sent back to it
local conversation_buf = nil

local function agent()
  return require("lsp_agent")
end

local function notify(msg, level)
  vim.notify("lsp-agent: " .. msg, level or vim.log.levels.INFO)
end

local function str(v)
  return (v == nil or v == vim.NIL) and "" or tostring(v)
end

--- A `context` event (rules loaded, mentions attached or not found) as one line.
function M.describe_context(e)
  if e.what == "rules" then
    return str(e.status ~= nil and e.status or "project rules")
  end
  if e.what == "alternatives" and type(e.status) == "string" then
    return e.status .. " (code actions on the line offer the others)"
  end
  local attached = type(e.attached) == "table" and #e.attached > 0 and table.concat(e.attached, ", ") or "nothing"
  local problems = ""
  for _, p in ipairs(type(e.problems) == "table" and e.problems or {}) do
    problems = problems .. "; " .. str(p)
  end
  return ("context: attached %s%s"):format(attached, problems)
end

--- The diagnostics of `bufnr` from every language server (and other sources), in the LSP shape the server takes.
function M.diagnostics(bufnr)
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    if d.source ~= OWN_SOURCE then
      local item = {
        range = {
          start = { line = d.lnum, character = d.col or 0 },
          ["end"] = { line = d.end_lnum or d.lnum, character = d.end_col or d.col or 0 },
        },
        message = d.message,
        severity = d.severity,
      }
      if d.source then
        item.source = d.source
      end
      if type(d.code) == "string" or type(d.code) == "number" then
        item.code = d.code
      end
      out[#out + 1] = item
    end
  end
  return out
end

--- Complete an ask's params: the buffer's diagnostics for `#diagnostics` or a "fix this diagnostic" action.
function M.decorate(params, bufnr)
  local wants = params.withDiagnostics or (type(params.task) == "string" and params.task:lower():find("#diagnostics"))
  params.withDiagnostics = nil
  if wants and bufnr and vim.api.nvim_buf_is_valid(bufnr) and params.diagnostics == nil then
    params.diagnostics = M.diagnostics(bufnr)
  end
  return params
end

--- Completion for :AgentAsk / :AgentFollowUp: `@file`, `@symbol`, `@selection` and `#diagnostics` from the server.
function M.complete(arglead)
  if not (arglead:sub(1, 1) == "@" or arglead:sub(1, 1) == "#") then
    return {}
  end
  local client = agent().client()
  if not client then
    return {}
  end
  local bufnr = vim.api.nvim_get_current_buf()
  local params = { command = "lspAgent.completeMention", arguments = { { prefix = arglead } } }
  if vim.api.nvim_buf_get_name(bufnr) ~= "" and vim.bo[bufnr].buftype == "" then
    params.arguments[1].uri = vim.uri_from_bufnr(bufnr)
  end
  local resp = client:request_sync("workspace/executeCommand", params, 2000, bufnr)
  local items = resp and resp.result and resp.result.items or {}
  return vim.tbl_map(function(i) return i.label end, items)
end

--- Start a new conversation: later asks no longer see the earlier exchanges.
function M.new()
  local id = ("nvim-%d-%d-%d"):format(vim.fn.getpid(), os.time(), math.random(1000, 9999))
  agent().execute("lspAgent.newConversation", { { sessionId = id } }, function(result)
    agent().config.session_id = type(result) == "table" and result.sessionId or id
    runs.append({ "", ("=== new conversation %s ==="):format(agent().config.session_id) })
    notify("new conversation " .. agent().config.session_id)
  end)
end

--- Ask a follow-up in the current conversation (the last ask's file is the default context).
function M.follow_up(task, opts)
  task = vim.trim(task or "")
  if task == "" then
    notify("describe the follow-up, e.g. :AgentFollowUp now add a test for it", vim.log.levels.WARN)
    return
  end
  local a = agent()
  opts = opts or {}
  local bufnr = opts.bufnr or vim.api.nvim_get_current_buf()
  local params = { task = task, sessionId = a.config.session_id, followUp = true }
  if opts.range and vim.api.nvim_buf_get_name(bufnr) ~= "" and vim.bo[bufnr].buftype == "" then
    params.uri = vim.uri_from_bufnr(bufnr)
    params.range = a.line_range(bufnr, opts.range[1], opts.range[2])
  end
  M.decorate(params, bufnr)
  a.execute("lspAgent.ask", { params }, function(result, client)
    if type(result) == "table" and type(result.runId) == "string" then
      runs.started(result.runId, task, client.id)
      notify(("follow-up %s started: %s"):format(result.runId, task))
    end
  end, bufnr)
end

--- Ask the conversation's last task again (its pending edits are rejected first).
function M.retry()
  agent().execute("lspAgent.retry", { { sessionId = agent().config.session_id } }, function(result, client)
    if type(result) == "table" and type(result.runId) == "string" then
      local old = runs.runs[str(result.retried)]
      if old and old.proposal == "pending" then
        runs.settle(old.id, "rejected")
      end
      runs.started(result.runId, str(result.task), client.id)
      notify(("retrying: run %s started: %s"):format(result.runId, str(result.task)))
    end
  end)
end

--- The conversation as lines: each exchange's task, full answer and what became of its edits.
function M.render(conv)
  local lines = { ("# lsp-agent conversation %s"):format(str(conv.sessionId)) }
  local exchanges = type(conv.exchanges) == "table" and conv.exchanges or {}
  if #exchanges == 0 then
    lines[#lines + 1] = ""
    lines[#lines + 1] = "(no exchanges yet: :AgentAsk starts one)"
  end
  if type(conv.summary) == "table" and type(conv.summary.text) == "string" then
    lines[#lines + 1] = ""
    lines[#lines + 1] = ("## Summary of the %s oldest exchanges (the prompt shows it instead of them)"):format(str(conv.summary.exchanges))
    lines[#lines + 1] = ""
    vim.list_extend(lines, vim.split(conv.summary.text, "\n", { plain = true }))
  end
  for i, e in ipairs(exchanges) do
    lines[#lines + 1] = ""
    lines[#lines + 1] = ("## %d. %s"):format(i, str(e.task):gsub("\n", " "))
    local marks = (e.retried and ", retried" or "") .. (e.folded == true and ", in the summary" or "")
      .. (e.rewound == true and ", rewound" or "")
    lines[#lines + 1] = ("run %s, %s%s"):format(str(e.runId), str(e.outcome), marks)
    lines[#lines + 1] = ""
    for _, l in ipairs(vim.split(str(e.answer) ~= "" and str(e.answer) or "(no answer yet)", "\n", { plain = true })) do
      lines[#lines + 1] = l
    end
    if type(e.proposed) == "table" and #e.proposed > 0 then
      lines[#lines + 1] = ""
      lines[#lines + 1] = "Proposed: " .. table.concat(e.proposed, ", ")
    end
    for _, n in ipairs(type(e.notes) == "table" and e.notes or {}) do
      lines[#lines + 1] = "- " .. str(n)
    end
  end
  if (tonumber(conv.compacted) or 0) > 0 then
    lines[#lines + 1] = ""
    lines[#lines + 1] = ("(the prompt leaves out the %d oldest exchanges to fit %s tokens)"):format(conv.compacted, str(conv.budget))
  end
  return lines
end

--- Show the current conversation in a scratch buffer (lsp-agent://conversation).
function M.show()
  agent().execute("lspAgent.conversation", { { sessionId = agent().config.session_id } }, function(conv)
    if not conversation_buf or not vim.api.nvim_buf_is_valid(conversation_buf) then
      conversation_buf = vim.api.nvim_create_buf(false, true)
      vim.api.nvim_buf_set_name(conversation_buf, "lsp-agent://conversation")
      vim.bo[conversation_buf].buftype = "nofile"
      vim.bo[conversation_buf].bufhidden = "hide"
      vim.bo[conversation_buf].filetype = "markdown"
    end
    vim.bo[conversation_buf].modifiable = true
    vim.api.nvim_buf_set_lines(conversation_buf, 0, -1, false, M.render(type(conv) == "table" and conv or {}))
    vim.bo[conversation_buf].modifiable = false
    local wins = vim.fn.win_findbuf(conversation_buf)
    if #wins > 0 then
      vim.api.nvim_set_current_win(wins[1])
    else
      vim.cmd(agent().config.transcript_split)
      vim.api.nvim_win_set_buf(0, conversation_buf)
    end
    M.last_shown = conv
  end)
end

--- Ask the agent to fix the diagnostic under the cursor (from any language server); its neighbours go along.
function M.fix_diagnostic()
  local bufnr = vim.api.nvim_get_current_buf()
  local line = vim.api.nvim_win_get_cursor(0)[1] - 1
  local here = vim.tbl_filter(function(d) return d.source ~= OWN_SOURCE end, vim.diagnostic.get(bufnr, { lnum = line }))
  if #here == 0 or vim.api.nvim_buf_get_name(bufnr) == "" then
    notify("no diagnostic on this line to fix (:lua vim.diagnostic.open_float() shows what is reported)", vim.log.levels.WARN)
    return
  end
  table.sort(here, function(a, b) return a.severity < b.severity end) -- errors first
  local d = here[1]
  local source = d.source and (" (" .. d.source .. ")") or ""
  local message = d.message:gsub("%s+", " ")
  local task = ("Fix this problem reported at line %d%s: %s"):format(d.lnum + 1, source, message)
  local params = {
    task = task,
    sessionId = agent().config.session_id,
    uri = vim.uri_from_bufnr(bufnr),
    range = { start = { line = d.lnum, character = d.col or 0 }, ["end"] = { line = d.end_lnum or d.lnum, character = d.end_col or 0 } },
    diagnostics = M.diagnostics(bufnr),
  }
  agent().execute("lspAgent.ask", { params }, function(result, client)
    if type(result) == "table" and type(result.runId) == "string" then
      runs.started(result.runId, task, client.id)
      notify(("run %s started: %s"):format(result.runId, task))
    end
  end, bufnr)
end

--- :AgentNew, :AgentFollowUp, :AgentRetry, :AgentConversation and :AgentFixDiagnostic.
function M.create_commands()
  local cmd = vim.api.nvim_create_user_command
  cmd("AgentNew", M.new, { desc = "Start a new conversation with the agent" })
  cmd("AgentFollowUp", function(o)
    local range = o.range > 0 and { o.line1, o.line2 } or nil
    if o.args ~= "" then
      M.follow_up(o.args, { range = range })
    else
      vim.ui.input({ prompt = "Follow up: " }, function(task)
        if task then
          M.follow_up(task, { range = range })
        end
      end)
    end
  end, { nargs = "*", range = true, complete = M.complete, desc = "Ask a follow-up in the current conversation" })
  cmd("AgentRetry", M.retry, { desc = "Ask the conversation's last task again" })
  cmd("AgentFixDiagnostic", M.fix_diagnostic, { desc = "Ask the agent to fix the diagnostic under the cursor" })
  cmd("AgentConversation", M.show, { desc = "Show the current conversation (tasks, answers, what was applied)" })
end

return M
