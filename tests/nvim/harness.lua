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

return M
