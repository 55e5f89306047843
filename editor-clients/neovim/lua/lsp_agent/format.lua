--- Readable transcript lines for `lspAgent/event` payloads (the same wording as the CLI and VS Code).
local M = {}

local function str(v, fallback)
  if v == nil or v == vim.NIL then
    return fallback or ""
  end
  if type(v) == "string" then
    return v
  end
  return vim.json.encode(v)
end

local function num(v)
  return type(v) == "number" and v or 0
end

local function cut(text, limit)
  if #text <= limit then
    return text
  end
  return text:sub(1, limit - 3) .. "..."
end

--- Tool-call arguments as `k=v, ...`, cut to `limit` characters.
function M.short_args(args, limit)
  limit = limit or 120
  local text
  if type(args) == "table" and not vim.islist(args) then
    local keys = vim.tbl_keys(args)
    table.sort(keys)
    local parts = {}
    for _, k in ipairs(keys) do
      parts[#parts + 1] = k .. "=" .. vim.json.encode(args[k])
    end
    text = table.concat(parts, ", ")
  else
    text = str(args)
  end
  return cut(text:gsub("\n", "\\n"), limit)
end

--- The first `n` lines of a tool output and how many were left out.
function M.first_lines(text, n)
  n = n or 3
  local parts = vim.split(text, "\n", { plain = true })
  local shown = {}
  for i = 1, math.min(n, #parts) do
    shown[#shown + 1] = cut(parts[i], 160)
  end
  local out = table.concat(shown, "\n   ")
  if #parts > n then
    out = out .. ("\n   ... (%d more lines)"):format(#parts - n)
  end
  return out
end

--- The changed files of a proposal event: list of {path, kind}.
function M.changes(event)
  local out = {}
  if type(event.changes) == "table" then
    for _, c in ipairs(event.changes) do
      if type(c) == "table" then
        out[#out + 1] = { path = str(c.path, "?"), kind = str(c.kind, "modify") }
      end
    end
  end
  return out
end

--- One event as text (several lines for plans, proposals and answers).
function M.describe(e)
  local k = e.kind
  if k == "start" then
    return ("task: %s (model %s, tool calling %s)"):format(str(e.task), str(e.model, "?"), str(e.toolCalling, "?"))
  elseif k == "thought" then
    return "thought: " .. vim.trim(str(e.text))
  elseif k == "tool_call" then
    return ("-> %s(%s)"):format(str(e.name), M.short_args(e.arguments))
  elseif k == "tool_result" then
    return ("<- %s %s in %.2fs: %s"):format(str(e.name), e.ok and "ok" or "failed", num(e.seconds), M.first_lines(str(e.output)))
  elseif k == "plan" then
    local subtasks = type(e.subtasks) == "table" and e.subtasks or {}
    local lines = { ("plan (%d subtasks):"):format(#subtasks) }
    for _, t in ipairs(subtasks) do
      local deps = ""
      if type(t.dependencies) == "table" and #t.dependencies > 0 then
        deps = " after " .. table.concat(vim.tbl_map(tostring, t.dependencies), ", ")
      end
      lines[#lines + 1] = ("  %s. %s%s"):format(str(t.id), str(t.description), deps)
    end
    if e.fallback and e.fallback ~= vim.NIL then
      lines[#lines + 1] = ("  (fallback: %s)"):format(str(e.fallback))
    end
    return table.concat(lines, "\n")
  elseif k == "subtask" then
    return ("subtask %s %s: %s"):format(str(e.id), str(e.status), str(e.description))
  elseif k == "compaction" then
    return ("compacted context: %s -> %s tokens (%d messages removed, %d outputs cut)"):format(
      str(e.before), str(e.after), num(e.removed), num(e.truncated))
  elseif k == "usage" then
    return ("tokens: %d in / %d out, cost $%.4f"):format(num(e.promptTokens), num(e.completionTokens), num(e.cost))
  elseif k == "permission" then
    local reason = (e.reason and e.reason ~= vim.NIL) and (" (" .. str(e.reason) .. ")") or ""
    return ("permission for %s: %s%s"):format(str(e.tool), str(e.decision), reason)
  elseif k == "error" then
    return "error: " .. str(e.message, "unknown error")
  elseif k == "proposal" then
    local changes = M.changes(e)
    local summary = str(e.summary)
    local lines = { ("proposal: %d file(s) changed%s"):format(#changes, summary ~= "" and (" - " .. cut(summary, 200)) or "") }
    for _, c in ipairs(changes) do
      lines[#lines + 1] = ("   %s %s"):format(c.kind, c.path)
    end
    lines[#lines + 1] = "   (apply with the code action \"Apply agent edit\" or :AgentApply; :AgentReject to drop)"
    return table.concat(lines, "\n")
  elseif k == "edits" then
    local parts = {}
    for _, c in ipairs(type(e.changes) == "table" and e.changes or {}) do
      parts[#parts + 1] = vim.trim(("%s %s"):format(str(c.path, "?"), str(c.what)))
    end
    local reason = (e.reason and e.reason ~= vim.NIL) and (" (reason: " .. cut(str(e.reason), 200) .. ")") or ""
    local left = type(e.remaining) == "table" and #e.remaining > 0
        and ("; still pending: " .. table.concat(vim.tbl_map(tostring, e.remaining), ", ")) or ""
    return ("edits %s: %s%s%s"):format(str(e.outcome), table.concat(parts, ", "), reason, left)
  elseif k == "context" then
    return require("lsp_agent.conversation").describe_context(e)
  elseif k == "alternative" then
    return ("alternative used: %s line %d is now `%s` (was `%s`); it passes the tests too"):format(
      str(e.path, "?"), num(e.line), vim.trim(str(e.version)), vim.trim(str(e.previous)))
  elseif k == "done" then
    local err = (e.error and e.error ~= vim.NIL) and (", error: " .. str(e.error)) or ""
    local checks = M.checks(e)
    local state = ("done: %s"):format(str(e.stopReason, "?"))
    if e.status == "checks_failed" or #checks > 0 then
      state = ("checks failed: %s (%s)"):format(#checks > 0 and table.concat(checks, "; ") or "?", str(e.stopReason, "?"))
    end
    local head = ("%s after %d iterations%s"):format(state, num(e.iterations), err)
    local answer = vim.trim(str(e.answer))
    if answer ~= "" then
      return head .. "\n   answer: " .. answer:gsub("\n", "\n   ")
    end
    return head
  end
  local rest = vim.deepcopy(e)
  rest.runId, rest.kind = nil, nil
  return ("%s: %s"):format(str(k, "?"), cut(vim.json.encode(rest), 200))
end

--- The checks a `done` event says the proposal fails (strings; {} when none).
function M.checks(e)
  local out = {}
  for _, c in ipairs(type(e.checksFailed) == "table" and e.checksFailed or {}) do
    out[#out + 1] = str(c)
  end
  return out
end

--- "checks failed: <first check> (+N more)", as the server's titles say it.
function M.checks_text(checks, limit)
  limit = limit or 120
  local first = vim.trim((checks[1] or ""):gsub("%s+", " "))
  if first == "" then
    return "checks failed"
  end
  local more = #checks > 1 and (" (+%d more)"):format(#checks - 1) or ""
  return "checks failed: " .. cut(first, limit) .. more
end

--- One event as transcript lines: `[hh:mm:ss] [run] text`, split on newlines.
function M.lines(event)
  local prefix = ("[%s] [%s] "):format(os.date("%H:%M:%S"), str(event.runId):sub(1, 8))
  local text = M.describe(event)
  local out = {}
  for i, line in ipairs(vim.split(text, "\n", { plain = true })) do
    out[#out + 1] = (i == 1 and prefix or string.rep(" ", #prefix)) .. line
  end
  return out
end

return M
