--- :AgentUndo: revert the last applied edits (lspAgent.undoApply); the server refuses if a file changed since.
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

return M
