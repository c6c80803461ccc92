"""The papers' bounds and rates as pure functions of the certificate's constants, one module per paper."""
