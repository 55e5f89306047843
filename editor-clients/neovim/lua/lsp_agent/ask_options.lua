--- Per-ask options of :AgentAsk: `--model=NAME` (completed from the server's `models`) and, for a buffer without a
--- file in a multi-root workspace, the folder the user picks.
local M = {}

--- (task, model) from the command's arguments: a leading `--model=NAME` (or `--model NAME`) picks the model.
function M.parse(args)
  local model, rest = args:match("^%s*%-%-model=(%S+)%s*(.*)$")
  if not model then
    model, rest = args:match("^%s*%-%-model%s+(%S+)%s*(.*)$")
  end
  if model then
    return rest, model
  end
  return args, nil
end

--- Completions for :AgentAsk: `--model=` and the model names, while the first argument is being typed.
function M.complete(arglead, cmdline, models)
  local args = cmdline:match("^%s*%S+%s+(.*)$") or ""
  if vim.trim(args:sub(1, #args - #arglead)) ~= "" then
    return {} -- only the first argument picks the model; the rest is the task
  end
  local prefix = "--model="
  if arglead:sub(1, #prefix) ~= prefix and prefix:sub(1, #arglead) ~= arglead then
    return {}
  end
  local out = {}
  for _, name in ipairs(models() or {}) do
    local item = prefix .. name
    if item:sub(1, #arglead) == arglead then
      out[#out + 1] = item
    end
  end
  return out
end

--- The models the server offers (lspAgent.status `models`), asked synchronously for completion.
function M.server_models(client)
  if not client then
    return {}
  end
  local reply = client.request_sync("workspace/executeCommand", { command = "lspAgent.status", arguments = {} }, 2000)
  local status = reply and reply.result
  return type(status) == "table" and type(status.models) == "table" and status.models or {}
end

--- Call `done(folder_uri_or_nil)`: nil for a buffer with a file or a single folder, else the folder the user picks.
function M.folder(client, has_file, done)
  local folders = client and client.workspace_folders or {}
  if has_file or #folders < 2 then
    return done(nil)
  end
  vim.ui.select(folders, {
    prompt = "Folder for the agent: ",
    format_item = function(f) return f.name or vim.uri_to_fname(f.uri) end,
  }, function(choice)
    if choice then
      done(choice.uri)
    end
  end)
end

return M
