print("osd")
