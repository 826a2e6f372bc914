#!/usr/bin/env node
import { run } from './program';

void run(process.argv);
