--- The client's view of agent runs (running, pending edits, transcript) and the transcript scratch buffer.
local format = require("lsp_agent.format")

local M = {}

---@class lsp_agent.Run
---@field id string
---@field task string
---@field state "running"|"succeeded"|"checks_failed"|"failed"|"cancelled" checks_failed: finished, its proposal fails its own checks
---@field checks_failed string[]
---@field proposal "none"|"pending"|"applied"|"rejected"
---@field files string[]
---@field summary string
---@field answer string
---@field error string|nil
---@field client_id integer|nil
---@field seq integer
---@field kinds string[]

---@type table<string, lsp_agent.Run>
M.runs = {}
local seq = 0
local transcript_buf = nil
local listeners = {}
-- The reply whose streamed words grow the transcript's last line: { run = id, channel = "message"|"thought",
-- held = line ends not shown yet }.
local live = nil

local function ensure(run_id, task)
  local run = M.runs[run_id]
  if not run then
    seq = seq + 1
    run = { id = run_id, task = task or "", state = "running", proposal = "none", files = {}, summary = "",
      answer = "", seq = seq, kinds = {}, checks_failed = {} }
    M.runs[run_id] = run
  end
  return run
end

local function fire(run)
  for _, fn in ipairs(listeners) do
    pcall(fn, run)
  end
end

--- Call `fn(run)` whenever a run changes.
function M.on_change(fn)
  listeners[#listeners + 1] = fn
end

--- The transcript buffer (created on first use).
function M.transcript_buffer()
  if transcript_buf and vim.api.nvim_buf_is_valid(transcript_buf) then
    return transcript_buf
  end
  transcript_buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(transcript_buf, "lsp-agent://transcript")
  vim.bo[transcript_buf].buftype = "nofile"
  vim.bo[transcript_buf].bufhidden = "hide"
  vim.bo[transcript_buf].swapfile = false
  vim.bo[transcript_buf].filetype = "lsp_agent_transcript"
  vim.api.nvim_buf_set_lines(transcript_buf, 0, -1, false, { "lsp-agent transcript (newest at the bottom)" })
  vim.bo[transcript_buf].modifiable = false
  return transcript_buf
end

local function scroll_to_end(buf)
  local count = vim.api.nvim_buf_line_count(buf)
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    vim.api.nvim_win_set_cursor(win, { count, 0 })
  end
end

--- Append lines to the transcript and keep windows showing it scrolled to the end.
function M.append(lines)
  live = nil -- a new line ends the one growing with streamed words
  local buf = M.transcript_buffer()
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, -1, -1, false, lines)
  vim.bo[buf].modifiable = false
  scroll_to_end(buf)
end

--- Show one `text` event (the model's words as they stream, throttled by the server): the transcript's last line
--- grows; a new reply or channel starts a new line ("thinking: " for reasoning), and a newline in the text too.
--- Line ends that end a piece wait for more text, so a reply's last line end leaves no empty line.
function M.live_text(event)
  local channel = event.channel == "thought" and "thought" or "message"
  local text = type(event.text) == "string" and event.text or ""
  local buf = M.transcript_buffer()
  local continues = live and live.run == event.runId and live.channel == channel and event.first ~= true
  if not continues then
    live = nil
    text = text:gsub("^%s+", "")
  end
  local body = text:gsub("\n+$", "")
  if body ~= "" then
    vim.bo[buf].modifiable = true
    if continues then
      local count = vim.api.nvim_buf_line_count(buf)
      local pieces = vim.split(live.held .. body, "\n", { plain = true })
      pieces[1] = (vim.api.nvim_buf_get_lines(buf, count - 1, count, false)[1] or "") .. pieces[1]
      vim.api.nvim_buf_set_lines(buf, count - 1, count, false, pieces)
    else
      local pieces = vim.split(body, "\n", { plain = true })
      local label = channel == "thought" and "thinking: " or ""
      pieces[1] = ("[%s] [%s] %s%s"):format(os.date("%H:%M:%S"), event.runId:sub(1, 8), label, pieces[1])
      vim.api.nvim_buf_set_lines(buf, -1, -1, false, pieces)
      live = { run = event.runId, channel = channel }
    end
    vim.bo[buf].modifiable = false
    live.held = text:sub(#body + 1)
  elseif live then
    live.held = live.held .. text
  end
  if event.final == true then
    live = nil
  end
  scroll_to_end(buf)
end

--- Record a run the client started (its events may have arrived first).
function M.started(run_id, task, client_id)
  local run = ensure(run_id, task)
  if run.task == "" then
    run.task = task
  end
  run.client_id = run.client_id or client_id
  fire(run)
  return run
end

--- Fold one `lspAgent/event` payload into the run state and the transcript.
function M.on_event(event, client_id)
  if type(event) ~= "table" or type(event.runId) ~= "string" or type(event.kind) ~= "string" then
    return nil
  end
  local run = ensure(event.runId)
  run.client_id = run.client_id or client_id
  run.kinds[#run.kinds + 1] = event.kind
  local k = event.kind
  if k == "text" then
    M.live_text(event)
    fire(run)
    return run
  end
  if k == "start" and type(event.task) == "string" then
    run.task = event.task
  elseif k == "error" then
    run.error = type(event.message) == "string" and event.message or "unknown error"
  elseif k == "proposal" then
    run.proposal = "pending"
    run.files = vim.tbl_map(function(c) return c.path end, format.changes(event))
    run.summary = type(event.summary) == "string" and event.summary or ""
  elseif k == "edits" then
    -- The server settled changes (found in the text, applied through applyEdit, or rejected).
    if event.state == "applied" or event.state == "rejected" then
      run.proposal = event.state
    end
    if type(event.remaining) == "table" and #event.remaining > 0 then
      run.files = vim.tbl_filter(function(f) return type(f) == "string" end, event.remaining)
    end
  elseif k == "alternative" then
    run.summary = type(event.summary) == "string" and event.summary or run.summary
  elseif k == "done" then
    run.answer = type(event.answer) == "string" and event.answer or ""
    run.checks_failed = format.checks(event)
    if event.stopReason == "cancelled" then
      run.state = "cancelled"
    elseif (event.status == "checks_failed" or #run.checks_failed > 0) and event.stopReason ~= "error" then
      run.state = "checks_failed"
    elseif event.success == false then
      run.state = "failed"
    else
      run.state = "succeeded"
    end
    if type(event.error) == "string" and event.error ~= "" then
      run.error = event.error
    end
  end
  if not (k == "thought" and event.streamed == true) then -- a streamed thought was shown as it came
    M.append(format.lines(event))
  end
  fire(run)
  return run
end

--- Mark a run's pending proposal applied or rejected (from a command result's `state`; "pending" is a no-op).
function M.settle(run_id, outcome)
  if outcome ~= "applied" and outcome ~= "rejected" then
    return
  end
  local run = M.runs[run_id]
  if run and run.proposal == "pending" then
    run.proposal = outcome
    M.append({ ("[%s] [%s] edits %s"):format(os.date("%H:%M:%S"), run_id:sub(1, 8), outcome) })
    fire(run)
  end
end

--- Runs matching `pred`, newest first.
function M.list(pred)
  local out = {}
  for _, run in pairs(M.runs) do
    if not pred or pred(run) then
      out[#out + 1] = run
    end
  end
  table.sort(out, function(a, b) return a.seq > b.seq end)
  return out
end

function M.running()
  return M.list(function(r) return r.state == "running" end)
end

function M.pending()
  return M.list(function(r) return r.proposal == "pending" end)
end

--- A run's state in words: "checks failed: tests fail: ..." apart from an error ("failed: ...").
function M.state_text(run)
  if run.state == "checks_failed" then
    return format.checks_text(run.checks_failed)
  elseif run.state == "failed" then
    return run.error and ("failed: " .. run.error) or "failed"
  elseif run.state == "succeeded" then
    return "finished"
  end
  return run.state
end

--- A short status text for statuslines: "" when idle.
function M.status_text()
  local parts = {}
  local running, pending = #M.running(), #M.pending()
  local failing = #M.list(function(r) return r.proposal == "pending" and r.state == "checks_failed" end)
  if running > 0 then
    parts[#parts + 1] = running .. " running"
  end
  if pending > 0 then
    parts[#parts + 1] = pending .. " pending"
  end
  if failing > 0 then
    parts[#parts + 1] = failing .. " checks failed"
  end
  return #parts > 0 and ("agent: " .. table.concat(parts, ", ")) or ""
end

return M
