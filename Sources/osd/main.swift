import OpenSwiftDataTool

Tool.main()
