--- :AgentUndo: revert the last applied edits (lspAgent.undoApply); the server refuses if a file changed since.
--- :AgentRewind [N]: back to exchange N of the conversation (lspAgent.rewind; without N a picker of exchanges):
--- the files applied since get their old text back, file by file (a file changed since is left as it is, and
--- said so), and the conversation goes on from N.
local M = {}

--- Ask the server to restore the text every file had before the last :AgentApply.
function M.undo(execute, notify)
  return execute("lspAgent.undoApply", {}, function(result)
    if type(result) == "table" and result.undone == true then
      local files = type(result.files) == "table" and table.concat(result.files, ", ") or ""
      notify(("undid the edits of run %s (%s)"):format(tostring(result.runId), files))
    end
  end)
end

local function cut(text, limit)
  text = vim.trim(tostring(text or ""):gsub("%s+", " "))
  return #text <= limit and text or (text:sub(1, limit - 3) .. "...")
end

local function files_of(rows)
  local seen, out = {}, {}
  for _, row in ipairs(rows) do
    for _, path in ipairs(type(row.applied) == "table" and row.applied or {}) do
      if not seen[path] then
        seen[path], out[#out + 1] = true, path
      end
    end
  end
  return #out > 0 and ("restores " .. table.concat(out, ", ")) or "no applied files to restore"
end

--- The picker's choices, newest first: each exchange still in the conversation but the newest, then its start.
function M.rewind_items(rows)
  local kept = vim.tbl_filter(function(r) return type(r) == "table" and r.rewound ~= true end, rows or {})
  local items = {}
  for i = #kept - 1, 1, -1 do
    local later = vim.list_slice(kept, i + 1)
    items[#items + 1] = {
      exchange = kept[i].number,
      text = ("%d. %s (drop %d later; %s)"):format(kept[i].number, cut(kept[i].task, 60), #later, files_of(later)),
    }
  end
  if #kept > 0 then
    items[#items + 1] = { exchange = 0, text = ("0. the start of the conversation (drop all %d; %s)"):format(#kept, files_of(kept)) }
  end
  return items
end

--- The rewind's answer as a message and a log level (a warning when files were left as they are).
function M.describe(result)
  local restored = #result.restored > 0 and ("restored " .. table.concat(result.restored, ", ")) or "no files to restore"
  local refused = #result.refused > 0 and ("; left as they are: " .. table.concat(result.refused, "; ")) or ""
  local text = ("rewound to exchange %d (%d later exchange(s) dropped): %s%s"):format(
    result.exchange, #result.dropped, restored, refused)
  return text, #result.refused > 0 and vim.log.levels.WARN or vim.log.levels.INFO
end

--- Rewind the conversation (`session_id`, nil: the folder's current one) to exchange `number`, or pick one.
function M.rewind(execute, notify, session_id, number, on_done)
  local function go(n)
    return execute("lspAgent.rewind", { { exchange = n, sessionId = session_id } }, function(result)
      if type(result) == "table" and type(result.restored) == "table" then
        local text, level = M.describe(result)
        require("lsp_agent.runs").append({ ("[%s] === %s ==="):format(os.date("%H:%M:%S"), text) })
        notify(text, level)
        if on_done then
          on_done(result)
        end
      end
    end)
  end
  if number then
    return go(number)
  end
  return execute("lspAgent.exchanges", { { sessionId = session_id } }, function(result)
    local items = M.rewind_items(type(result) == "table" and result.exchanges or {})
    if #items == 0 then
      notify("nothing to rewind: the conversation has no exchange left")
      return
    end
    vim.ui.select(items, {
      prompt = "Rewind the conversation to after: ",
      format_item = function(item) return item.text end,
    }, function(choice)
      if choice then
        go(choice.exchange)
      end
    end)
  end)
end

return M
