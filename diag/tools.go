package diag

// Tools are the tools written as one Tool value each, in the order
// `ibscript tools` and the Lua reference do not care about (they sort
// by name). A new tool is its file in this package and its line here;
// cmd/ibscript and bindings adapt every one.
func Tools() []*Tool {
	return []*Tool{
		smInfoTool,
		ibAddrTool,
		ibStatusTool,
		ibPortStateTool,
		ibCacheEditTool,
		ibCCQueryTool,
		ibCCConfigTool,
		smpQueryTool,
		ibIDsVerifyTool,
		ibStatTool,
		ibSysstatTool,
	}
}
