"""The IR: typed instructions in structured regions (If, Loop), its printer, type inference and passes."""
