-- What both Neovim scripts share: the results table written to $EVALSPEC_NVIM_OUT as JSON, a hard
-- timeout that writes what was seen so far and quits, and named steps that stop at the first error.
--
--   local h = dofile(<this file>).start(default_limit_ms)
--   h.result (add fields to it), h.step(name, fn) -> ok, h.finish()

local M = {}

function M.start(default_limit)
  local h = { result = { steps = {} } }
  local out_path = os.getenv("EVALSPEC_NVIM_OUT")
  local limit = tonumber(os.getenv("EVALSPEC_NVIM_TIMEOUT_MS") or tostring(default_limit))
  local finished = false

  function h.finish()
    if finished then
      return
    end
    finished = true
    local f = io.open(out_path, "w")
    f:write(vim.fn.json_encode(h.result))
    f:close()
    vim.cmd("qall!")
  end

  function h.step(name, fn)
    local ok, err = pcall(fn)
    table.insert(h.result.steps, name)
    if not ok then
      h.result.error = name .. ": " .. tostring(err)
      h.finish()
    end
    return ok
  end

  -- Whatever is still waiting when the limit passes, the results so far are written and Neovim quits.
  vim.defer_fn(function()
    h.result.error = "timed out after " .. limit .. " ms (steps: " .. table.concat(h.result.steps, ", ") .. ")"
    h.finish()
  end, limit)
  return h
end

--- The README's complete setup (editors/nvim/README.md, the lua block after its "setup:" marker), run as
--- a user's init.lua would run it, with this checkout's plugin folder. The scripts then call setup()
--- again with the README's options kept (on_attach…) and their own server command and run settings.
function M.readme_setup(plugin)
  local lines = vim.fn.readfile(plugin .. "/README.md")
  local inside, marker, code = false, false, {}
  for _, line in ipairs(lines) do
    if line:find("<!-- setup:", 1, true) then
      marker = true
    elseif marker and not inside and line == "```lua" then
      inside = true
    elseif inside and line == "```" then
      break
    elseif inside then
      table.insert(code, (line:gsub('"/path/to/evalspec/editors/nvim"', vim.fn.string(plugin))))
    end
  end
  assert(#code > 0, "no setup block in the README")
  local chunk = assert(loadstring(table.concat(code, "\n"), "README setup"))
  chunk()
end

--- setup() with the README's options (on_attach…) and the test's own in their place (cmd, init_options).
function M.setup(opts)
  local evalspec = require("evalspec")
  evalspec.setup(vim.tbl_extend("force", evalspec.config or {}, opts))
end

--- What the README's setup did to this buffer and to Neovim.
function M.readme_effects(bufnr)
  local k = vim.fn.maparg("K", "n", false, true)
  local ca = vim.fn.maparg("<leader>ca", "n", false, true)
  return { hover_key_buffer = k.buffer, code_action_key_buffer = ca.buffer,
           update_in_insert = vim.diagnostic.config().update_in_insert, completeopt = vim.o.completeopt }
end

return M
