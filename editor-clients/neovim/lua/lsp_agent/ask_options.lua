--- Per-ask options of :AgentAsk: `--model=NAME` (completed from the server's `models`), `--read=NAME` (other
--- workspace folders the run may read) and, for a buffer without a file in a multi-root workspace, the folder the
--- user picks.
local M = {}

--- (task, model, read_folders) from the command's arguments: leading options `--model=NAME` (or `--model NAME`) pick
--- the model, `--read=NAME[,NAME]` (repeatable) opens other workspace folders for reading (the `readFolders` option).
function M.parse(args)
  local model, reads, rest = nil, nil, args
  while true do
    local name, value, tail = rest:match("^%s*%-%-(%a+)=(%S+)%s*(.*)$")
    if not name then
      name, value, tail = rest:match("^%s*%-%-(%a+)%s+(%S+)%s*(.*)$")
    end
    if name == "model" then
      model, rest = value, tail
    elseif name == "read" then
      reads = reads or {}
      for folder in value:gmatch("[^,]+") do
        reads[#reads + 1] = folder
      end
      rest = tail
    else
      return rest, model, reads
    end
  end
end

--- Completions for :AgentAsk while only options were typed: `--model=` with the model names, `--read=` with the
--- names of the workspace folders (`folders()`).
function M.complete(arglead, cmdline, models, folders)
  local args = cmdline:match("^%s*%S+%s+(.*)$") or ""
  local before = vim.trim(args:sub(1, #args - #arglead))
  for word in before:gmatch("%S+") do
    if word:sub(1, 2) ~= "--" then
      return {} -- the task has begun: the rest is the task
    end
  end
  local out = {}
  local function offer(prefix, names)
    if arglead:sub(1, #prefix) ~= prefix and prefix:sub(1, #arglead) ~= arglead then
      return
    end
    for _, name in ipairs(names() or {}) do
      local item = prefix .. name
      if item:sub(1, #arglead) == arglead then
        out[#out + 1] = item
      end
    end
  end
  offer("--model=", models)
  if folders then
    offer("--read=", folders)
  end
  return out
end

--- The names of the workspace folders of the client (what `--read=` and `@name/...` accept).
function M.folder_names(client)
  local names = {}
  for _, f in ipairs(client and client.workspace_folders or {}) do
    names[#names + 1] = f.name or vim.fs.basename(vim.uri_to_fname(f.uri))
  end
  return names
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
