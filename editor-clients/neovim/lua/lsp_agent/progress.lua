--- The progress echo: one line per $/progress update, saying "lsp-agent" once and the title once.
local M = {}

local titles = {} -- token -> title of its `begin` (reports and ends carry no title)

--- Drop a leading "lsp-agent:" (the echo adds its own) and surrounding blanks.
local function bare(text)
  if type(text) ~= "string" then
    return ""
  end
  return vim.trim((text:gsub("^%s*lsp%-agent:%s*", "")))
end

--- The message without words the title already says ("indexing" / "indexing the workspace").
local function without_title(message, title)
  if title == "" or message == "" then
    return message
  end
  local first = title:match("^(%S+)")
  if message == title or (first and message:sub(1, #first) == first and message:sub(#first + 1, #first + 1):match("^%s?$")) then
    return vim.trim(message:sub(#first + 1))
  end
  return message
end

--- The echo text for one progress value of `token`, e.g. "lsp-agent: indexing proj: 10/40 app.py 25%".
function M.text(token, value)
  local key = tostring(token)
  if value.kind == "begin" then
    titles[key] = bare(value.title)
  end
  local title = titles[key] or bare(value.title)
  local message = without_title(bare(value.message), title)
  if value.kind == "end" then
    titles[key] = nil
    return ("lsp-agent: %s%s"):format(title, message ~= "" and (": " .. message) or " done")
  end
  local pct = type(value.percentage) == "number" and (" %d%%"):format(value.percentage) or ""
  return ("lsp-agent: %s%s%s"):format(title, message ~= "" and (": " .. message) or "", pct)
end

return M
