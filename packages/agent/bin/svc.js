#!/usr/bin/env node
// Committed shim so npm can link the bin before the first build; the code lives in dist/.
import '../dist/main.js';
