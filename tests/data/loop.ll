define i32 @main() {
entry:
  br label %loop
loop:
  %i = phi i32 [0, %entry], [%j, %body]
  %c = icmp slt i32 %i, 3
  br i1 %c, label %body, label %done
body:
  %j = add i32 %i, 1
  br label %loop
done:
  ret i32 %i
}
